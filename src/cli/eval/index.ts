/**
 * `drover eval status|list`: the scheduler's evaluations, as Nomad's
 * `eval` commands print them (status: why allocations could not be placed).
 */
import type { Evaluation } from "../../structs/evaluation.ts";
import { dispatch, OUTPUT_FLAGS, OUTPUT_USAGE, ADDRESS_USAGE, positionals, printData, printList, processIo, withFlags, type Io, type Subcommand } from "../command.ts";
import { formatKV, nanosAgo, shortId } from "../format.ts";
import { formatPlacementFailures } from "../monitor.ts";
import { resolveEval } from "../prefix.ts";

/** Nomad's getTriggerDetails: the line naming what triggered the evaluation, when it names anything (drover makes no max-plan-attempts evals). */
function triggerDetails(evaluation: Evaluation, verbose: boolean): [string, string][] {
  const byJob = ["job-register", "job-deregister", "periodic-job", "rolling-update", "deployment-watcher"];
  const [noun, subject] = byJob.includes(evaluation.TriggeredBy)
    ? ["Job ID", evaluation.JobID]
    : evaluation.TriggeredBy === "node-update"
      ? ["Node ID", shortId(evaluation.NodeID, verbose)]
      : ["", ""];
  return noun && subject ? [[noun, subject]] : [];
}

const evalStatus: Subcommand = {
  summary: "Display evaluation status and placement failure reasons",
  usage: `Usage: drover eval status [options] <evaluation>

Options:
${ADDRESS_USAGE}
${OUTPUT_USAGE}`,
  flags: OUTPUT_FLAGS,
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one evaluation ID");
    const verbose = flags.booleans.verbose ?? false;
    const stub = await resolveEval(client, prefix!);
    const { body: evaluation } = await client.get<Evaluation>(`/v1/evaluation/${encodeURIComponent(stub.ID)}`);
    if (printData(io, flags, evaluation)) return 0;
    const failed = evaluation.FailedTGAllocs ?? {};
    const failures = Object.keys(failed).length > 0;
    const pairs: [string, string][] = [
      ["ID", shortId(evaluation.ID, verbose)],
      ["Create Time", nanosAgo(evaluation.CreateTime)],
      ["Modify Time", nanosAgo(evaluation.ModifyTime)],
      ["Status", evaluation.Status],
      ["Status Description", evaluation.StatusDescription || evaluation.Status],
      ["Type", evaluation.Type],
      ["TriggeredBy", evaluation.TriggeredBy],
      ...triggerDetails(evaluation, verbose),
      ["Priority", String(evaluation.Priority)],
      ["Placement Failures", String(failures)],
    ];
    io.print(formatKV(pairs));
    if (failures) {
      io.print(`\nFailed Placements\n${formatPlacementFailures(failed, "").join("\n")}\n`);
      if (evaluation.BlockedEval) io.print(`\nEvaluation "${shortId(evaluation.BlockedEval, verbose)}" waiting for additional capacity to place remainder`);
    }
    return 0;
  },
};

const evalList: Subcommand = {
  summary: "List the evaluations",
  usage: `Usage: drover eval list [options]

Options:
${ADDRESS_USAGE}
  -job <id>        Only the evaluations of this job.
  -status <name>   Only evaluations with this status (pending, complete, blocked, ...).
${OUTPUT_USAGE}`,
  flags: withFlags(OUTPUT_FLAGS, { strings: ["job", "status"] }),
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const verbose = flags.booleans.verbose ?? false;
    const { body } = await client.get<Evaluation[]>("/v1/evaluations");
    const { job, status } = flags.strings;
    const evaluations = body.filter((evaluation) => (job === undefined || evaluation.JobID === job) && (status === undefined || evaluation.Status === status));
    printList(io, flags, evaluations, "No evals found", ["ID", "Priority", "Triggered By", "Job ID", "Namespace", "Node ID", "Status", "Placement Failures"], (evaluation) => [
      shortId(evaluation.ID, verbose),
      String(evaluation.Priority),
      evaluation.TriggeredBy,
      evaluation.JobID,
      evaluation.Namespace,
      evaluation.NodeID ? shortId(evaluation.NodeID, verbose) : "<none>",
      evaluation.Status,
      String(Object.keys(evaluation.FailedTGAllocs ?? {}).length > 0),
    ]);
    return 0;
  },
};

export const EVAL_SUBCOMMANDS = { list: evalList, status: evalStatus };

export function evalCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("eval", EVAL_SUBCOMMANDS, argv, io);
}
