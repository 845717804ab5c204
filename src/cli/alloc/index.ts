/** `drover alloc <subcommand>`: Nomad's alloc commands. */
import { dispatch, processIo, type Io } from "../command.ts";
import { allocRestart, allocSignal, allocStop } from "./actions.ts";
import { allocChecks } from "./checks.ts";
import { allocExec } from "./exec.ts";
import { allocFs } from "./fs.ts";
import { allocLogs } from "./logs.ts";
import { allocStatus } from "./status.ts";

export const ALLOC_SUBCOMMANDS = { checks: allocChecks, exec: allocExec, fs: allocFs, logs: allocLogs, restart: allocRestart, signal: allocSignal, status: allocStatus, stop: allocStop };

export function allocCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("alloc", ALLOC_SUBCOMMANDS, argv, io);
}
