/** `drover job <subcommand>`: run, status, stop, inspect. */
import { dispatch, processIo, type Io } from "../command.ts";
import { jobInspect } from "./inspect.ts";
import { jobRun } from "./run.ts";
import { jobStatus } from "./status.ts";
import { jobStop } from "./stop.ts";

export const JOB_SUBCOMMANDS = { run: jobRun, status: jobStatus, stop: jobStop, inspect: jobInspect };

export function jobCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("job", JOB_SUBCOMMANDS, argv, io);
}
