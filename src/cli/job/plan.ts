/**
 * `drover job plan [options] <path>`: what running the job file would do,
 * without doing it. Exit codes as Nomad's: 0 nothing would be placed or
 * stopped, 1 allocations would be created or destroyed, 255 an error.
 */
import type { AllocMetric } from "../../structs/alloc.ts";
import { ADDRESS_USAGE, positionals, withFlags, type Subcommand } from "../command.ts";
import { formatPlacementFailures } from "../monitor.ts";
import type { JobDiff } from "../../structs/job-diff.ts";
import { formatJobDiff } from "./diff.ts";
import { JOB_FILE_FLAGS, JOB_FILE_USAGE, jobFileInput, loadJobFile } from "./job-file.ts";

interface DesiredUpdates {
  Stop: number;
  Place: number;
  Migrate: number;
  DestructiveUpdate: number;
  Canary: number;
}

interface JobPlanResponse {
  JobModifyIndex: number;
  Diff: JobDiff | null;
  Annotations: { DesiredTGUpdates: Record<string, DesiredUpdates> } | null;
  FailedTGAllocs: Record<string, AllocMetric> | null;
  Warnings: string;
}

/** Nomad's plan exit code when allocations would be created or destroyed. */
const EXIT_CHANGES = 1;
/** Nomad's plan exit code for an error. */
const EXIT_PLAN_ERROR = 255;

function exitCode(response: JobPlanResponse): number {
  if (!response.Diff || response.Diff.Type === "None") return 0;
  const changes = Object.values(response.Annotations?.DesiredTGUpdates ?? {}).some((d) => d.Stop + d.Place + d.Migrate + d.DestructiveUpdate + d.Canary > 0);
  return changes ? EXIT_CHANGES : 0;
}

function dryRun(response: JobPlanResponse, jobType: string): string {
  const failed = response.FailedTGAllocs ?? {};
  if (Object.keys(failed).length === 0) return "- All tasks successfully allocated.";
  const head = jobType === "system" ? "- WARNING: Failed to place allocations on all nodes." : "- WARNING: Failed to place all allocations.";
  return [head, ...formatPlacementFailures(failed, "  ")].join("\n");
}

export const jobPlan: Subcommand = {
  summary: "Dry-run a job update to determine its effects",
  usage: `Usage: drover job plan [options] <path>

  Shows what running the job file would change (a diff of the job) and what
  the scheduler would do, without changing anything. Exit code 0: no
  allocations would be created or destroyed; 1: some would; 255: an error.

Options:
${ADDRESS_USAGE}
${JOB_FILE_USAGE}
  -diff              Show the job's diff (default true; -diff=false hides it).
  -policy-override   Accepted for Nomad's scripts; drover has no Sentinel policies.
  -verbose           Show every field of the diff, changed or not.`,
  errorExitCode: EXIT_PLAN_ERROR,
  flags: withFlags(JOB_FILE_FLAGS, { booleans: ["diff", "policy-override", "verbose"] }),
  async run({ flags, client, io }) {
    const [path] = positionals(flags, 1, 1, "one job file");
    const diff = flags.booleans.diff ?? true;
    const verbose = flags.booleans.verbose ?? false;
    const job = await loadJobFile(jobFileInput(path!, flags, io.env, client.namespace));
    const response = await client.write<JobPlanResponse>("PUT", `/v1/job/${encodeURIComponent(job.ID)}/plan`, { Job: job, Diff: diff });
    if (diff && response.Diff) io.print(`${formatJobDiff(response.Diff, verbose)}\n`);
    io.print("Scheduler dry-run:");
    io.print(dryRun(response, job.Type));
    io.print("");
    if (response.Warnings) io.print(`Job Warnings:\n${response.Warnings}\n`);
    io.print(`Job Modify Index: ${response.JobModifyIndex}
To submit the job with version verification run:

nomad job run -check-index ${response.JobModifyIndex} ${path}

When running the job with the check-index flag, the job will only be run if the
job modify index given matches the server-side version. If the index has
changed, another user has modified the job and the plan's results are
potentially invalid.`);
    return exitCode(response);
  },
};
