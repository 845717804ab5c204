/** `drover alloc <subcommand>`: status, logs, exec, stop, restart, signal. */
import { dispatch, processIo, type Io } from "../command.ts";
import { allocRestart, allocSignal, allocStop } from "./actions.ts";
import { allocExec } from "./exec.ts";
import { allocLogs } from "./logs.ts";
import { allocStatus } from "./status.ts";

export const ALLOC_SUBCOMMANDS = { status: allocStatus, logs: allocLogs, exec: allocExec, stop: allocStop, restart: allocRestart, signal: allocSignal };

export function allocCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("alloc", ALLOC_SUBCOMMANDS, argv, io);
}
