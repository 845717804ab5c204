/**
 * `drover job restart <job>`: Nomad 1.6's command. Restarts a job's running
 * allocations in batches, in place (POST /v1/client/allocation/:id/restart)
 * or, with -reschedule, by stopping each (POST /v1/allocation/:id/stop) and
 * waiting until its replacement runs:
 *
 *   filter allocs (running, not replaced, -group, -task) ──> for each batch of -batch-size:
 *     no deployment may be active ──> restart or reschedule every alloc of the batch at once
 *       ──> errors? -on-error fail: stop; -yes: go on unless they will happen again (placement failures)
 *       ──> wait -batch-wait ──> next batch
 *
 * drover's CLI never prompts: where Nomad would ask ("ask" for -on-error or
 * -batch-wait, its default), -yes is needed, as Nomad needs it without a terminal.
 */
import { parseDuration, formatDuration } from "../../lib/duration.ts";
import type { Allocation, AllocListStub } from "../../structs/alloc.ts";
import type { AllocRestartRequest, AllocStopResponse } from "../../structs/api.ts";
import type { Deployment } from "../../structs/deployment.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import type { Job } from "../../structs/job.ts";
import { ADDRESS_USAGE, positionals, type Io, type Subcommand } from "../command.ts";
import { UsageError, type ParsedFlags } from "../flags.ts";
import { formatTime, shortId } from "../format.ts";
import type { AgentClient } from "../http-client.ts";
import { formatPlacementFailures } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";

/** How long one blocking query for the replacement waits before looking at the evaluations again. */
const REPLACEMENT_QUERY_WAIT = "5s";
/** How often a reschedule that is still waiting says so (Nomad's one minute). */
const STILL_WAITING_NOTICE_MS = 60_000;
/** Nomad's PermissionDeniedErrorContent: an error with it will happen again. */
const PERMISSION_DENIED = "Permission denied";

interface RestartOptions {
  jobPrefix: string;
  allTasks: boolean;
  yes: boolean;
  batchSize: number;
  batchSizePercent: boolean;
  batchWaitMs: number;
  onError: "ask" | "fail";
  noShutdownDelay: boolean;
  reschedule: boolean;
  verbose: boolean;
  groups: Set<string>;
  tasks: Set<string>;
}

/** A placement failure: rescheduling the next batch would fail the same way. */
class PlacementFailure extends Error {}

const BATCH_SIZE = /^(\d+)%?$/;

/** The flags, checked as Nomad's parseAndValidate checks them (and with its messages). */
function parseOptions(flags: ParsedFlags): RestartOptions {
  const [jobPrefix] = positionals(flags, 1, 1, "one argument: <job>");
  const yes = flags.booleans.yes ?? false;
  const batchSizeText = flags.strings["batch-size"] ?? "1";
  const match = BATCH_SIZE.exec(batchSizeText);
  if (!match) throw new UsageError(`Invalid -batch-size value "${batchSizeText}": batch size must be an integer or a percentage`);
  const batchSize = Number(match[1]);
  if (batchSize === 0) throw new UsageError(`Invalid -batch-size value "${batchSizeText}": number value must be greater than zero`);
  const notInteractive = (flag: string) => new UsageError(`Invalid ${flag} value "ask": "ask" cannot be used when terminal is not interactive (drover's job restart does not prompt: add -yes)`);
  const batchWaitText = flags.strings["batch-wait"] ?? "0s";
  let batchWaitMs = 0;
  if (batchWaitText.toLowerCase() === "ask") {
    if (!yes) throw notInteractive("-batch-wait");
  } else {
    try {
      batchWaitMs = parseDuration(batchWaitText);
    } catch (err) {
      throw new UsageError(`Invalid -batch-wait value "${batchWaitText}": ${(err as Error).message}`);
    }
  }
  const onError = flags.strings["on-error"] ?? "ask";
  if (onError !== "ask" && onError !== "fail") throw new UsageError(`Invalid -on-error value "${onError}": valid options are "ask" and "fail"`);
  if (onError === "ask" && !yes) throw notInteractive("-on-error");
  const tasks = new Set(flags.repeated.task ?? []);
  const allTasks = flags.booleans["all-tasks"] ?? false;
  const reschedule = flags.booleans.reschedule ?? false;
  if (allTasks && tasks.size > 0) throw new UsageError("The -all-tasks option cannot be used with -task");
  if (reschedule && tasks.size > 0) throw new UsageError("The -reschedule option cannot be used with -task");
  return {
    jobPrefix: jobPrefix!.trim(),
    allTasks,
    yes,
    batchSize,
    batchSizePercent: batchSizeText.endsWith("%"),
    batchWaitMs,
    onError,
    noShutdownDelay: flags.booleans["no-shutdown-delay"] ?? false,
    reschedule,
    verbose: flags.booleans.verbose ?? false,
    groups: new Set(flags.repeated.group ?? []),
    tasks,
  };
}

const ORDINAL_SUFFIX = ["th", "st", "nd", "rd"];
/** go-humanize's Ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st. */
function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? "th" : (ORDINAL_SUFFIX[n % 10] ?? "th")}`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** A line the way Nomad's restart prints it: a header `==> <time>: ...` or an indented step. */
const header = (text: string) => `==> ${formatTime(new Date())}: ${text}`;
const step = (text: string) => `    ${formatTime(new Date())}: ${text}`;

/** Nomad's errorFormat: "N errors occurred while restarting job:" and one bullet each. */
function errorList(errors: readonly Error[]): string {
  return `${plural(errors.length, "error", "errors")} occurred while restarting job:\n${errors.map((err) => `* ${err.message.trim()}`).join("\n")}`;
}

class JobRestart {
  private readonly id: (id: string) => string;

  constructor(
    private readonly client: AgentClient,
    private readonly io: Io,
    private readonly options: RestartOptions,
    private readonly job: Job,
  ) {
    this.id = (id) => shortId(id, options.verbose);
  }

  /** Whether the alloc has the task: its task states say so, else the job version it runs. */
  private hasTask(alloc: AllocListStub, versions: ReadonlyMap<number, Job>, task: string): boolean {
    if (alloc.TaskStates && task in alloc.TaskStates) return true;
    const group = versions.get(alloc.JobVersion)?.TaskGroups.find((candidate) => candidate.Name === alloc.TaskGroup);
    return group?.Tasks.some((candidate) => candidate.Name === task) ?? false;
  }

  /** Nomad's filterAllocs: running, not replaced, of the asked groups and tasks; -verbose says why others are skipped. */
  filter(allocs: readonly AllocListStub[], versions: ReadonlyMap<number, Job>): AllocListStub[] {
    const { groups, tasks, verbose } = this.options;
    const skip = (alloc: AllocListStub, why: string) => {
      if (verbose) this.io.print(step(`Skipping allocation "${this.id(alloc.ID)}" because ${why}`));
    };
    return allocs.filter((alloc) => {
      if (alloc.ClientStatus !== "running" && alloc.DesiredStatus !== "run") {
        // Nomad's message names the two statuses the other way round; its words are kept.
        skip(alloc, `desired status is "${alloc.ClientStatus}" and client status is "${alloc.DesiredStatus}"`);
        return false;
      }
      if (alloc.NextAllocation !== "") {
        skip(alloc, `it has already been replaced by "${this.id(alloc.NextAllocation)}"`);
        return false;
      }
      if (groups.size > 0 && !groups.has(alloc.TaskGroup)) {
        skip(alloc, "it doesn't have any of requested groups");
        return false;
      }
      if (tasks.size > 0 && ![...tasks].some((task) => this.hasTask(alloc, versions, task))) {
        skip(alloc, "it doesn't have any of requested tasks");
        return false;
      }
      return true;
    });
  }

  /** Nomad's ensureNoActiveDeployment: a deployment in progress would fight the restarts. */
  async ensureNoActiveDeployment(): Promise<void> {
    const { body } = await this.client.get<Deployment[]>(`/v1/job/${encodeURIComponent(this.job.ID)}/deployments`, { all: true, namespace: this.job.Namespace });
    const active = body.find((deployment) => !["failed", "successful", "cancelled"].includes(deployment.Status));
    if (active) throw new Error(`Deployment "${this.id(active.ID)}" is "${active.Status}"`);
  }

  async handle(alloc: AllocListStub, versions: ReadonlyMap<number, Job>): Promise<void> {
    try {
      if (this.options.reschedule) await this.reschedule(alloc);
      else await this.restart(alloc, versions);
    } catch (err) {
      const message = `Error restarting allocation "${this.id(alloc.ID)}": ${(err as Error).message}`;
      throw err instanceof PlacementFailure ? new PlacementFailure(message) : new Error(message);
    }
  }

  private async restart(alloc: AllocListStub, versions: ReadonlyMap<number, Job>): Promise<void> {
    const path = `/v1/client/allocation/${encodeURIComponent(alloc.ID)}/restart`;
    const short = this.id(alloc.ID);
    const send = (request: AllocRestartRequest) => this.client.write("POST", path, request, { namespace: alloc.Namespace });
    if (this.options.allTasks) {
      this.io.print(step(`Restarting all tasks in allocation "${short}" for group "${alloc.TaskGroup}"`));
      await send({ TaskName: "", AllTasks: true });
      return;
    }
    if (this.options.tasks.size === 0) {
      this.io.print(step(`Restarting running tasks in allocation "${short}" for group "${alloc.TaskGroup}"`));
      await send({ TaskName: "", AllTasks: false });
      return;
    }
    const tasks = [...this.options.tasks].filter((task) => this.hasTask(alloc, versions, task));
    const results = await Promise.allSettled(
      tasks.map(async (task) => {
        this.io.print(step(`Restarting task "${task}" in allocation "${short}" for group "${alloc.TaskGroup}"`));
        try {
          await send({ TaskName: task, AllTasks: false });
        } catch (err) {
          throw new Error(`Failed to restart task "${task}": ${(err as Error).message}`);
        }
      }),
    );
    const failures = results.flatMap((result) => (result.status === "rejected" ? [(result.reason as Error).message] : []));
    if (failures.length > 0) throw new Error(failures.join("\n"));
  }

  /** Stops the alloc, then waits until its replacement (following the chain) runs, or its group fails to place. */
  private async reschedule(alloc: AllocListStub): Promise<void> {
    const short = this.id(alloc.ID);
    this.io.print(step(`Rescheduling allocation "${short}" for group "${alloc.TaskGroup}"`));
    let stopped: AllocStopResponse;
    try {
      stopped = await this.client.write<AllocStopResponse>("POST", `/v1/allocation/${encodeURIComponent(alloc.ID)}/stop`, undefined, {
        namespace: alloc.Namespace,
        ...(this.options.noShutdownDelay ? { no_shutdown_delay: true } : {}),
      });
    } catch (err) {
      throw new Error(`Failed to stop allocation: ${(err as Error).message}`);
    }
    if (this.job.Type === "system") {
      try {
        await this.client.write("PUT", `/v1/job/${encodeURIComponent(this.job.ID)}/evaluate`, { JobID: this.job.ID, EvalOptions: { ForceReschedule: true } }, { namespace: this.job.Namespace });
      } catch (err) {
        throw new Error(`Failed evaluate job: ${(err as Error).message}`);
      }
    }
    let current = alloc.ID;
    let index = 1;
    let lastNotice = Date.now();
    for (;;) {
      const { body, index: next } = await this.client.get<Allocation>(`/v1/allocation/${encodeURIComponent(current)}`, {
        index,
        wait: REPLACEMENT_QUERY_WAIT,
        namespace: alloc.Namespace,
      });
      if (body.NextAllocation !== "") {
        this.io.print(step(`Allocation "${this.id(body.ID)}" replaced by "${this.id(body.NextAllocation)}", waiting for "${this.id(body.NextAllocation)}" to start running`));
        current = body.NextAllocation;
        index = 1;
        continue;
      }
      if (body.ClientStatus === "running" && body.ID !== alloc.ID) {
        this.io.print(step(`Allocation "${this.id(body.ID)}" is "running"`));
        return;
      }
      if (this.options.verbose) this.io.print(step(`Allocation "${this.id(body.ID)}" is "${body.ClientStatus}"`));
      await this.placementFailure(alloc, stopped.Index);
      if (Date.now() - lastNotice >= STILL_WAITING_NOTICE_MS) {
        this.io.print(step(`Still waiting for allocation "${short}" to be replaced`));
        lastNotice = Date.now();
      }
      index = next;
    }
  }

  /** Nomad's monitorPlacementFailures: a blocked evaluation since the stop that could not place the alloc's group. */
  private async placementFailure(alloc: AllocListStub, since: number): Promise<void> {
    const { body: evaluations } = await this.client.get<Evaluation[]>(`/v1/job/${encodeURIComponent(alloc.JobID)}/evaluations`, { namespace: alloc.Namespace });
    for (const evaluation of evaluations) {
      if (evaluation.CreateIndex < since || evaluation.Status !== "blocked") continue;
      const failures = evaluation.FailedTGAllocs?.[alloc.TaskGroup];
      if (failures) {
        const detail = formatPlacementFailures({ [alloc.TaskGroup]: failures }, "    ").slice(1).join("\n");
        throw new PlacementFailure(`Evaluation "${this.id(evaluation.ID)}" has placement failures for group "${alloc.TaskGroup}":\n${detail}`);
      }
    }
  }
}

/** Nomad's isErrorRecoverable: placement failures and permission errors will happen again. */
const recoverable = (errors: readonly Error[]) => errors.every((err) => !(err instanceof PlacementFailure) && !err.message.includes(PERMISSION_DENIED));

export const jobRestart: Subcommand = {
  summary: "Restart or reschedule allocations for a job",
  usage: `Usage: drover job restart [options] <job>

  Restarts the tasks of the job's running allocations in place, or with
  -reschedule stops each so the scheduler places a replacement, in batches:
  each batch is done (rescheduled allocations replaced and running) before
  the next starts. Nothing happens while a deployment of the job is active.

Options:
${ADDRESS_USAGE}
  -all-tasks            Restart every task, those that already ran included.
  -batch-size <n|n%>    Allocations per batch (default 1), or a percentage of them.
  -batch-wait <dur>     Time to wait between batches (default 0s; "ask" needs -yes).
  -group <name>         Only allocations of this group (repeatable).
  -task <name>          Only this task (repeatable); not with -all-tasks or -reschedule.
  -no-shutdown-delay    With -reschedule: skip the tasks' shutdown_delay.
  -on-error <ask|fail>  After a failed batch: "fail" stops; "ask" (the default) needs -yes,
                        which goes on unless the errors would happen again.
  -reschedule           Stop each allocation and wait for its replacement instead.
  -yes                  Answer yes where Nomad would ask (drover never prompts).
  -verbose              Full IDs, and the allocations skipped and why.`,
  flags: { booleans: ["all-tasks", "yes", "no-shutdown-delay", "reschedule", "verbose"], strings: ["batch-size", "batch-wait", "on-error"], repeated: ["group", "task"] },
  async run({ flags, client, io }) {
    const options = parseOptions(flags);
    const stub = await resolveJob(client, options.jobPrefix);
    const path = `/v1/job/${encodeURIComponent(stub.ID)}`;
    const namespace = { namespace: stub.Namespace };
    const { body: job } = await client.get<Job>(path, namespace);
    if (options.reschedule && !["batch", "service", "system"].includes(job.Type)) {
      io.error(`Jobs of type "${job.Type}" are not allowed to be rescheduled.`);
      return 1;
    }
    const { body: history } = await client.get<{ Versions: Job[] }>(`${path}/versions`, namespace);
    const versions = new Map(history.Versions.map((version) => [version.Version, version]));
    const { body: allocs } = await client.get<AllocListStub[]>(`${path}/allocations`, { ...namespace, all: true });
    const restart = new JobRestart(client, io, options, job);
    const targets = restart.filter(allocs, versions);
    if (targets.length === 0) {
      io.print("No allocations to restart");
      return 0;
    }
    const batchSize = options.batchSizePercent ? Math.ceil((targets.length * options.batchSize) / 100) : options.batchSize;
    io.print(header(`Restarting ${plural(targets.length, "allocation", "allocations")}`));

    const errors: Error[] = [];
    for (let start = 0; start < targets.length; start += batchSize) {
      try {
        await restart.ensureNoActiveDeployment();
      } catch (err) {
        errors.push(err as Error);
        break;
      }
      const batch = targets.slice(start, start + batchSize);
      if (batchSize > 1) io.print(header(`Restarting ${ordinal(start / batchSize + 1)} batch of ${batch.length} allocations`));
      const results = await Promise.allSettled(batch.map((alloc) => restart.handle(alloc, versions)));
      const batchErrors = results.flatMap((result) => (result.status === "rejected" ? [result.reason as Error] : []));
      errors.push(...batchErrors);
      if (start + batchSize >= targets.length) break;
      if (batchErrors.length > 0) {
        if (options.onError === "fail") {
          io.print(header("Stopping job restart due to error"));
          break;
        }
        if (!recoverable(batchErrors)) {
          io.print(header("Stopping job restart due to unrecoverable error"));
          break;
        }
      }
      if (options.batchWaitMs > 0) {
        io.print(header(`Waiting ${formatDuration(options.batchWaitMs)} before restarting the next batch`));
        await new Promise((resolve) => setTimeout(resolve, options.batchWaitMs));
      }
    }
    if (errors.length > 0) {
      io.print(header("Job restart finished with errors"));
      io.error(`\n${errorList(errors)}`);
      return 1;
    }
    io.print(header("Job restart finished"));
    io.print("\nJob restarted successfully!");
    return 0;
  },
};
