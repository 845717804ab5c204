/** `drover job <subcommand>`: Nomad's job commands. */
import { dispatch, processIo, type Io } from "../command.ts";
import { jobDeployments } from "./deployments.ts";
import { jobDispatch } from "./dispatch.ts";
import { jobEval } from "./eval.ts";
import { jobHistory, jobRevert } from "./history.ts";
import { jobInit } from "./init.ts";
import { jobInspect } from "./inspect.ts";
import { jobPeriodic } from "./periodic.ts";
import { jobPlan } from "./plan.ts";
import { jobPromote } from "./promote.ts";
import { jobRestart } from "./restart.ts";
import { jobRun } from "./run.ts";
import { jobScale } from "./scale.ts";
import { jobStatus } from "./status.ts";
import { jobStop } from "./stop.ts";
import { jobValidate } from "./validate.ts";

export const JOB_SUBCOMMANDS = {
  deployments: jobDeployments,
  dispatch: jobDispatch,
  eval: jobEval,
  history: jobHistory,
  init: jobInit,
  inspect: jobInspect,
  periodic: jobPeriodic,
  plan: jobPlan,
  promote: jobPromote,
  restart: jobRestart,
  revert: jobRevert,
  run: jobRun,
  scale: jobScale,
  status: jobStatus,
  stop: jobStop,
  validate: jobValidate,
};

export function jobCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("job", JOB_SUBCOMMANDS, argv, io);
}
