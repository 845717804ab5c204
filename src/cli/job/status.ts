/** `drover job status [-json] [-verbose] [ID]`: every job, or one job with its summary and allocations. */
import type { AllocListStub } from "../../structs/alloc.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import { nextCronTime } from "../../lib/cron.ts";
import type { Deployment } from "../../structs/deployment.ts";
import { periodicSpecs, type Job, type JobListStub, type JobSummary, type PeriodicConfig } from "../../structs/job.ts";
import { ADDRESS_USAGE, OUTPUT_FLAGS, OUTPUT_USAGE, positionals, printData, printList, withFlags, type Subcommand } from "../command.ts";
import { formatKV, formatList, formatNanos, formatTime, goDuration, nanosAgo, orNone, shortId } from "../format.ts";
import { deployedTable } from "../deployment/format.ts";
import { formatPlacementFailures } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";

/** The columns of Nomad's job list (createStatusListOutput). */
export const JOB_LIST_HEADER = ["ID", "Type", "Priority", "Status", "Submit Date"];

export function jobListRow(job: JobListStub): string[] {
  // Nomad marks the jobs that only launch children.
  const type = job.ParameterizedJob ? `${job.Type}/parameterized` : job.Periodic ? `${job.Type}/periodic` : job.Type;
  return [job.ID, type, String(job.Priority), job.Status, formatNanos(job.SubmitTime)];
}

export function allocTable(allocs: readonly AllocListStub[], verbose: boolean): string {
  return formatList([
    ["ID", "Node ID", "Task Group", "Version", "Desired", "Status", "Created", "Modified"],
    ...allocs.map((alloc) => [
      shortId(alloc.ID, verbose),
      shortId(alloc.NodeID, verbose),
      alloc.TaskGroup,
      String(alloc.JobVersion),
      alloc.DesiredStatus,
      alloc.ClientStatus,
      nanosAgo(alloc.CreateTime),
      nanosAgo(alloc.ModifyTime),
    ]),
  ]);
}

function summaryTable(summary: JobSummary): string {
  return formatList([
    ["Task Group", "Queued", "Starting", "Running", "Failed", "Complete", "Lost"],
    ...Object.entries(summary.Summary).map(([group, counts]) =>
      [group, counts.Queued, counts.Starting, counts.Running, counts.Failed, counts.Complete, counts.Lost].map(String),
    ),
  ]);
}

/** When a periodic job launches next, and how far away that is (the earliest of its cron and crons); "none" when never. */
export function nextLaunchText(periodic: PeriodicConfig): string {
  const now = Date.now();
  const times = periodicSpecs(periodic).flatMap((spec) => nextCronTime(spec, periodic.TimeZone, now) ?? []);
  if (times.length === 0) return "none";
  const next = Math.min(...times);
  return `${formatTime(new Date(next))} (${goDuration(Math.round((next - now) / 1000))} from now)`;
}

/** Nomad's "Next Periodic Launch": when and how far away, or why never. */
function nextLaunch(job: Job): string {
  if (job.Stop) return "none (job stopped)";
  return nextLaunchText(job.Periodic!);
}

export const jobStatus: Subcommand = {
  summary: "Show the status of jobs",
  usage: `Usage: drover job status [options] [job]

  Without a job: every job. With a job ID (or a unique prefix): its details,
  summary per group, placement failures and allocations.

Options:
${ADDRESS_USAGE}
${OUTPUT_USAGE}
  -short         Only the job's key = value lines.
  -evals         Also the job's evaluations.
  -all-allocs    Also the allocations of earlier jobs with the same ID.`,
  flags: withFlags(OUTPUT_FLAGS, { booleans: ["short", "evals", "all-allocs"] }),
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 0, 1, "at most one job ID");
    const verbose = flags.booleans.verbose ?? false;
    if (prefix === undefined) {
      const { body: jobs } = await client.get<JobListStub[]>("/v1/jobs");
      printList(io, flags, jobs, "No running jobs", JOB_LIST_HEADER, jobListRow);
      return 0;
    }
    const stub = await resolveJob(client, prefix);
    const path = `/v1/job/${encodeURIComponent(stub.ID)}`;
    const [{ body: job }, { body: summary }, { body: allocs }, { body: evals }, { body: deployment }] = await Promise.all([
      client.get<Job>(path),
      client.get<JobSummary>(`${path}/summary`),
      client.get<AllocListStub[]>(`${path}/allocations`, { all: flags.booleans["all-allocs"] ? true : undefined }),
      client.get<Evaluation[]>(`${path}/evaluations`),
      client.get<Deployment | null>(`${path}/deployment`),
    ]);
    if (printData(io, flags, { Job: job, Summary: summary, Allocations: allocs })) return 0;
    // Nomad's IsParameterized: a dispatched child keeps its parent's block but is an ordinary job.
    const parameterized = job.ParameterizedJob !== null && job.ParameterizedJob !== undefined && !job.Dispatched;
    const periodic = Boolean(job.Periodic) && !parameterized;
    const pairs: [string, string][] = [
      ["ID", job.ID],
      ["Name", job.Name],
      ["Submit Date", formatNanos(job.SubmitTime)],
      ["Type", job.Type],
      ["Priority", String(job.Priority)],
      ["Datacenters", job.Datacenters.join(",")],
      ["Namespace", job.Namespace],
      ["Status", job.Stop && job.Status === "dead" ? "dead (stopped)" : job.Status],
      ["Periodic", String(Boolean(job.Periodic))],
      ["Parameterized", String(parameterized)],
    ];
    if (periodic) pairs.push(["Next Periodic Launch", nextLaunch(job)]);
    io.print(formatKV(pairs));
    if (flags.booleans.short) return 0;
    if (parameterized && job.ParameterizedJob) {
      io.print(
        `\nParameterized Job\n${formatKV([
          ["Payload", orNone(job.ParameterizedJob.Payload)],
          ["Required Metadata", orNone(job.ParameterizedJob.MetaRequired.join(", "))],
          ["Optional Metadata", orNone(job.ParameterizedJob.MetaOptional.join(", "))],
        ])}`,
      );
    }
    if (!periodic && !parameterized) io.print(`\nSummary\n${summaryTable(summary)}`);
    const children = summary.Children;
    if (parameterized || periodic || children.Pending + children.Running + children.Dead > 0) {
      io.print(`\n${parameterized ? "Parameterized Job Summary" : "Children Job Summary"}\n${formatList([["Pending", "Running", "Dead"], [children.Pending, children.Running, children.Dead].map(String)])}`);
    }
    if (periodic || parameterized) {
      // A job that launches children has no allocations of its own: Nomad lists the children instead.
      const suffix = periodic ? "/periodic-" : "/dispatch-";
      const { body: launched } = await client.get<JobListStub[]>("/v1/jobs", { prefix: `${job.ID}${suffix}` });
      const mine = launched.filter((child) => child.ParentID === job.ID);
      if (mine.length === 0) io.print(periodic ? "\nNo instances of periodic job found" : "\nNo dispatched instances of parameterized job found");
      else io.print(`\n${periodic ? "Previously Launched Jobs" : "Dispatched Jobs"}\n${formatList([["ID", "Status"], ...mine.map((child) => [child.ID, child.Status])])}`);
      return 0;
    }
    if (flags.booleans.evals || verbose) {
      io.print(
        `\nEvaluations\n${formatList([
          ["ID", "Priority", "Triggered By", "Status", "Placement Failures"],
          ...evals.map((evaluation) => [shortId(evaluation.ID, verbose), String(evaluation.Priority), evaluation.TriggeredBy, evaluation.Status, String(Object.keys(evaluation.FailedTGAllocs ?? {}).length > 0)]),
        ])}`,
      );
    }
    const blocked = evals.find((evaluation) => evaluation.Status === "blocked");
    if (blocked?.FailedTGAllocs) {
      io.print(`\nPlacement Failure\n${formatPlacementFailures(blocked.FailedTGAllocs, "").join("\n")}`);
    }
    if (deployment) {
      io.print(
        `\nLatest Deployment\n${formatKV([
          ["ID", shortId(deployment.ID, verbose)],
          ["Status", deployment.Status],
          ["Description", deployment.StatusDescription],
        ])}`,
      );
      const groups = deployedTable(deployment);
      if (groups !== undefined) io.print(`\nDeployed\n${groups}`);
    }
    io.print(allocs.length === 0 ? "\nAllocations\nNo allocations placed" : `\nAllocations\n${allocTable(allocs, verbose)}`);
    return 0;
  },
};
