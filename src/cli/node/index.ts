/** `drover node <subcommand>`: Nomad's node commands. */
import { dispatch, processIo, type Io } from "../command.ts";
import { nodeConfig, nodeDrain, nodeEligibility } from "./drain.ts";
import { nodePool } from "./pool.ts";
import { nodeStatus } from "./status.ts";

export const NODE_SUBCOMMANDS = { config: nodeConfig, drain: nodeDrain, eligibility: nodeEligibility, pool: nodePool, status: nodeStatus };

export function nodeCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("node", NODE_SUBCOMMANDS, argv, io);
}
