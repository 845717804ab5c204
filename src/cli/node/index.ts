/** `drover node <subcommand>`: status. */
import { dispatch, processIo, type Io } from "../command.ts";
import { nodeStatus } from "./status.ts";

export const NODE_SUBCOMMANDS = { status: nodeStatus };

export function nodeCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("node", NODE_SUBCOMMANDS, argv, io);
}
