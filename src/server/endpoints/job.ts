/**
 * Jobs (Nomad's Job endpoint): register a version, stop or purge, and the
 * reads of a job and what belongs to it.
 *
 *   register ──> check (jobspec/api-job.ts) ──> region, free space ──> one write:
 *                  spec changed? new version (Version+1, JobModifyIndex = index)
 *                  ──> evaluate (reconcile, place) ──> {EvalID, JobModifyIndex, Index}
 *   deregister ──> one write: Stop version, or purge the row ──> evaluate (stops its allocs)
 *   plan ──> the same as register in a transaction never committed ──> diff, per-group updates, failures
 *   revert ──> register a kept version's spec as the newest version
 */
import { jobFromApi } from "../../jobspec/api-job.ts";
import { groupBy } from "../../lib/group-by.ts";
import { jsonTextOf, parsedWithText } from "../../lib/json-text.ts";
import { renderPath } from "../../jobspec/paths.ts";
import { countProblems } from "../../jobspec/validate.ts";
import { ValidationError } from "../../lib/validation.ts";
import type { JobDeregisterResponse, JobRegisterResponse, JobValidateResponse, ScalingRequest } from "../../structs/api.ts";
import { isAllocTerminal, type Allocation, type AllocListStub } from "../../structs/alloc.ts";
import type { Evaluation, EvalTrigger } from "../../structs/evaluation.ts";
import type { Namespace } from "../../structs/namespace.ts";
import { DEFAULT_NAMESPACE, launchesChildren, SERVER_SET_JOB_FIELDS, type Job, type JobListStub, type JobSummary } from "../../structs/job.ts";
import { GO_ZERO_TIME } from "../../structs/node.ts";
import { ServerError, invalid, notFound } from "../errors.ts";
import { isFinishedOrphan } from "../gc.ts";
import { specOf, storeVersion, versionsOf } from "../job-versions.ts";
import type { JobDiff } from "../../structs/job-diff.ts";
import { diffJobs } from "../job-diff.ts";
import { annotateDiff, desiredUpdates, type DesiredUpdates } from "../plan.ts";
import { evaluate, reconcileJob, refreshJobStatus } from "../scheduler/evaluate.ts";
import { dispatch, type JobDispatchRequest, type JobDispatchResponse } from "../children/dispatch.ts";
import { forceLaunch, isPeriodicActive, nextLaunchMs, trackPeriodic } from "../children/periodic.ts";
import { setVersionStable } from "../deployments/stable.ts";
import { recordScalingEvent, scalingBoundsProblem } from "../scaling-events.ts";
import type { PeriodicForceResponse } from "../../structs/periodic.ts";
import type { ScalingEvent } from "../../structs/scaling.ts";
import { changesDestructively } from "../scheduler/reconcile.ts";
import type { WriteTxn } from "../state/store.ts";
import { allocsOfJob, childrenSummary, evalsOfJob, jobListStub, jobSummary } from "../status.ts";
import { byPrefix, EVERY_NAMESPACE, type EndpointContext } from "./context.ts";

/** PUT /v1/job/:id/plan's answer (Nomad's JobPlanResponse). */
export interface JobPlanResponse {
  JobModifyIndex: number;
  CreatedEvals: Evaluation[] | null;
  Diff: JobDiff | null;
  Annotations: { DesiredTGUpdates: Record<string, DesiredUpdates>; PreemptedAllocs: null };
  FailedTGAllocs: Evaluation["FailedTGAllocs"];
  NextPeriodicLaunch: string;
  Warnings: string;
  Index: number;
}

/** GET /v1/job/:id/scale (Nomad's JobScaleStatusResponse). */
export interface JobScaleStatus {
  JobID: string;
  Namespace: string;
  JobCreateIndex: number;
  JobModifyIndex: number;
  JobStopped: boolean;
  TaskGroups: Record<string, { Desired: number; Placed: number; Running: number; Healthy: number; Unhealthy: number; Events: ScalingEvent[] | null }>;
}

export interface RegisterOptions {
  /** Register only if the job's JobModifyIndex is `jobModifyIndex` (0: only if it does not exist). */
  enforceIndex?: boolean;
  jobModifyIndex?: number;
}

/** Why `job` cannot be registered in its node pool: the pool must exist (Nomad's jobNodePoolValidatingMutator). */
function nodePoolProblem(txn: WriteTxn, job: Job): string | undefined {
  return txn.nodePools.get(job.NodePool) ? undefined : `job is in nonexistent node pool "${job.NodePool}"`;
}

/**
 * The job `id` in `namespace`, or undefined. drover keeps one job per ID
 * across all namespaces (register refuses a second), so the ID finds it and
 * the namespace must then match, as Nomad's (namespace, ID) key would.
 */
function jobIn(txn: { jobs: { get(id: string): Job | undefined } }, id: string, namespace: string): Job | undefined {
  const job = txn.jobs.get(id);
  return job?.Namespace === namespace ? job : undefined;
}

/** A namespace's Capabilities: EnabledTaskDrivers (empty: any) less DisabledTaskDrivers. */
function driverAllowed(namespace: Namespace, driver: string): boolean {
  const capabilities = namespace.Capabilities;
  if (!capabilities) return true;
  const enabled = capabilities.EnabledTaskDrivers ?? [];
  return (enabled.length === 0 || enabled.includes(driver)) && !(capabilities.DisabledTaskDrivers ?? []).includes(driver);
}

/** Why `job` cannot be stored in its namespace, if it cannot. */
function namespaceProblem(txn: WriteTxn, job: Job): string | undefined {
  const namespace = txn.namespaces.get(job.Namespace);
  if (!namespace) return `namespace "${job.Namespace}" does not exist`;
  const refused = [...new Set(job.TaskGroups.flatMap((group) => group.Tasks.map((task) => task.Driver)))].filter((driver) => !driverAllowed(namespace, driver));
  // Nomad's jobNamespaceConstraintCheckHook, word for word.
  if (refused.length === 1) return `used task driver "${refused[0]}" is not allowed in namespace "${namespace.Name}"`;
  if (refused.length > 1) return `used task drivers ${JSON.stringify(refused)} are not allowed in namespace "${namespace.Name}"`;
  const other = txn.jobs.get(job.ID);
  if (other && other.Namespace !== job.Namespace) {
    return `a job "${job.ID}" already exists in namespace "${other.Namespace}" (drover keeps job IDs unique across namespaces)`;
  }
  return undefined;
}

/** The groups of `job` whose allocs registering it would replace rather than update in place. */
function destructiveGroups(existing: Job | undefined, job: Job): Set<string> {
  if (!existing) return new Set();
  return new Set(job.TaskGroups.filter((group) => changesDestructively(existing, job, group)).map((group) => group.Name));
}

/** Nomad's answer to register and dispatch: no evaluation for a job that only launches children. */
const NO_EVALUATION = "";

export class JobEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** POST /v1/jobs: checks `raw` (API JSON), stores a new version when it changed, and schedules it. */
  register(raw: unknown, options: RegisterOptions = {}): JobRegisterResponse {
    return this.registerJob(this.checked(raw), options);
  }

  /** `raw` (API JSON) as a complete, valid job of this agent's region. */
  private checked(raw: unknown): Job {
    const submitted = jobFromApi(raw, { source: "job", style: "json" });
    if (submitted.Region !== this.ctx.region) {
      throw invalid(`job region "${submitted.Region}" is not this agent's region "${this.ctx.region}"`);
    }
    return submitted;
  }

  /** The job as registering `submitted` would store it: the existing version when the spec is the same. */
  private stage(txn: WriteTxn, submitted: Job): { existing: Job | undefined; job: Job } {
    const refused = nodePoolProblem(txn, submitted) ?? namespaceProblem(txn, submitted);
    if (refused) throw invalid(`job "${submitted.ID}": ${refused}`);
    const existing = txn.jobs.get(submitted.ID);
    const job = existing && specOf(existing) === specOf(submitted) ? existing : storeVersion(txn, submitted, existing);
    return { existing, job };
  }

  private registerJob(submitted: Job, options: RegisterOptions = {}, trigger: EvalTrigger = "job-register"): JobRegisterResponse {
    this.ctx.requireFreeSpace("register the job");
    return this.ctx.store.write((txn) => {
      const existing = jobIn(txn, submitted.ID, submitted.Namespace);
      if (options.enforceIndex && (existing?.JobModifyIndex ?? 0) !== (options.jobModifyIndex ?? 0)) {
        throw new ServerError(
          "conflict",
          existing
            ? `enforcing job modify index ${options.jobModifyIndex ?? 0}: job exists with conflicting job modify index ${existing.JobModifyIndex}`
            : `enforcing job modify index ${options.jobModifyIndex}: job does not exist`,
        );
      }
      const { job } = this.stage(txn, submitted);
      trackPeriodic(txn, job);
      const evalId = this.evaluateUnlessParent(txn, job, trigger);
      return { EvalID: evalId, EvalCreateIndex: evalId === NO_EVALUATION ? 0 : txn.index, JobModifyIndex: job.JobModifyIndex, Warnings: "", Index: txn.index };
    });
  }

  /** Schedules the job, unless it only launches children (periodic, parameterized): those are never placed. */
  private evaluateUnlessParent(txn: WriteTxn, job: Job, trigger: EvalTrigger): string {
    if (launchesChildren(job)) {
      refreshJobStatus(txn, job.ID);
      return NO_EVALUATION;
    }
    return evaluate(txn, this.ctx.scheduler, job.ID, trigger).ID;
  }

  /**
   * PUT /v1/job/:id/plan: what registering `raw` would do, computed by the
   * same code in a transaction that is thrown away: the diff against the
   * current version, what each group's allocs would undergo, and what would
   * not fit.
   */
  plan(raw: unknown, withDiff: boolean): JobPlanResponse {
    const submitted = this.checked(raw);
    return this.ctx.store.dryRun((txn) => {
      const { existing, job } = this.stage(txn, submitted);
      const updates = desiredUpdates(job, reconcileJob(txn, job.ID, ""));
      const evaluation = evaluate(txn, this.ctx.scheduler, job.ID, "job-register");
      const blocked = evaluation.BlockedEval ? txn.evals.get(evaluation.BlockedEval) : undefined;
      const next = nextLaunchMs(job, txn.periodicLaunches.get(job.ID));
      return {
        JobModifyIndex: existing?.JobModifyIndex ?? 0,
        CreatedEvals: blocked ? [blocked] : null,
        Diff: withDiff ? annotateDiff(diffJobs(existing, job), updates, destructiveGroups(existing, job)) : null,
        Annotations: { DesiredTGUpdates: updates, PreemptedAllocs: null },
        FailedTGAllocs: evaluation.FailedTGAllocs,
        NextPeriodicLaunch: next === undefined ? GO_ZERO_TIME : new Date(next).toISOString(),
        Warnings: "",
        Index: this.ctx.store.index,
      };
    });
  }

  /** PUT /v1/validate/job: the job's problems, each as its own line; a 200 either way (Nomad's contract). */
  validate(raw: unknown): JobValidateResponse {
    const response: JobValidateResponse = { DriverConfigValidated: true, ValidationErrors: [], Error: "", Warnings: "" };
    try {
      this.checked(raw);
    } catch (err) {
      if (err instanceof ValidationError) response.ValidationErrors = err.problems.map((problem) => `${err.source}: ${problem}`);
      else if (err instanceof ServerError) response.ValidationErrors = [err.message];
      else throw err;
      response.Error = response.ValidationErrors.length === 1 ? response.ValidationErrors[0]! : `${response.ValidationErrors.length} errors occurred:\n${response.ValidationErrors.map((line) => `\t* ${line}`).join("\n")}\n\n`;
    }
    return response;
  }

  /** PUT /v1/job/:id/revert: registers kept version `version` again, as the newest version. */
  revert(id: string, version: number, enforcePriorVersion: number | null, namespace: string = DEFAULT_NAMESPACE): JobRegisterResponse {
    const current = this.get(id, namespace);
    if (enforcePriorVersion !== null && current.Version !== enforcePriorVersion) {
      throw invalid(`Current job has version ${current.Version}; enforcing version ${enforcePriorVersion}`);
    }
    if (version === current.Version) throw invalid("can't revert to current version");
    const target = this.versions(id, namespace).find((candidate) => candidate.Version === version);
    if (!target) throw notFound(`job "${id}" at version ${version}`);
    return this.registerJob(target);
  }

  /** PUT /v1/job/:id/evaluate: schedules the job again as it stands. */
  forceEvaluate(id: string, namespace: string = DEFAULT_NAMESPACE): JobRegisterResponse {
    return this.ctx.store.write((txn) => {
      const job = jobIn(txn, id, namespace);
      if (!job) throw notFound(`job "${id}"`);
      if (launchesChildren(job)) throw invalid("can't evaluate periodic or parameterized job");
      const evaluation = evaluate(txn, this.ctx.scheduler, id, "job-register");
      return { EvalID: evaluation.ID, EvalCreateIndex: txn.index, JobModifyIndex: job.JobModifyIndex, Warnings: "", Index: txn.index };
    });
  }

  /**
   * PUT /v1/job/:id/scale: a new version with the group's count changed,
   * within the group's `scaling` min and max; each request, a count change
   * or only a message, is kept as a scaling event.
   */
  scale(id: string, request: ScalingRequest, namespace: string = DEFAULT_NAMESPACE): JobRegisterResponse {
    this.ctx.requireFreeSpace("scale the job");
    return this.ctx.store.write((txn) => {
      const job = jobIn(txn, id, namespace);
      if (!job) throw notFound(`job "${id}"`);
      if (request.Target.Job !== undefined && request.Target.Job !== id) throw invalid("job ID in payload did not match URL");
      const group = job.TaskGroups.find((candidate) => candidate.Name === request.Target.Group);
      if (!group) throw invalid(`task group "${request.Target.Group}" specified for scaling does not exist in job`);
      const count = request.Count;
      if (count !== null && launchesChildren(job)) throw invalid("cannot scale a periodic or parameterized job");
      const bounds = scalingBoundsProblem(group, count);
      if (bounds) throw invalid(bounds);
      let evalId: string | null = null;
      let jobModifyIndex = job.JobModifyIndex;
      if (count !== null && count !== group.Count) {
        const scaled: Job = { ...job, TaskGroups: job.TaskGroups.map((candidate) => (candidate === group ? { ...candidate, Count: count } : candidate)) };
        // Placing a count past the limits would hold the agent's one thread for as long as registering it would.
        const tooMany = countProblems(scaled);
        if (tooMany.length > 0) throw invalid(tooMany.map((problem) => `${renderPath("json", scaled, problem.path)}: ${problem.message}`).join("; "));
        jobModifyIndex = storeVersion(txn, scaled, job).JobModifyIndex;
        evalId = evaluate(txn, this.ctx.scheduler, id, "job-scaling").ID;
      }
      recordScalingEvent(txn, job, group, request, evalId);
      return { EvalID: evalId ?? "", EvalCreateIndex: evalId ? txn.index : 0, JobModifyIndex: jobModifyIndex, Warnings: "", Index: txn.index };
    });
  }

  /** PUT /v1/job/:id/stable: marks a version stable (or not), as a successful deployment does. */
  setStable(id: string, version: number, stable: boolean, namespace: string = DEFAULT_NAMESPACE): { JobModifyIndex: number; Index: number } {
    return this.ctx.store.write((txn) => {
      if (!jobIn(txn, id, namespace)) throw notFound(`job "${id}"`);
      if (!setVersionStable(txn, id, version, stable)) throw notFound(`job "${id}" at version ${version}`);
      return { JobModifyIndex: txn.jobs.get(id)!.JobModifyIndex, Index: txn.index };
    });
  }

  /** PUT /v1/job/:id/periodic/force: launches a periodic job's child now. */
  periodicForce(id: string, namespace: string = DEFAULT_NAMESPACE): PeriodicForceResponse {
    this.ctx.requireFreeSpace("launch the job");
    return this.ctx.store.write((txn) => {
      const job = jobIn(txn, id, namespace);
      if (!job) throw notFound(`job "${id}"`);
      if (!job.Periodic) throw invalid("can't force launch non-periodic job");
      if (!isPeriodicActive(job)) throw invalid("can't force launch a stopped or disabled periodic job");
      const evaluation = forceLaunch(txn, this.ctx.scheduler, job);
      return { EvalID: evaluation.ID, EvalCreateIndex: txn.index, Index: txn.index };
    });
  }

  /** PUT /v1/job/:id/dispatch: a child of a parameterized job with the request's payload and meta. */
  dispatch(id: string, request: JobDispatchRequest, namespace: string = DEFAULT_NAMESPACE): JobDispatchResponse {
    this.ctx.requireFreeSpace("dispatch the job");
    return this.ctx.store.write((txn) => {
      const job = jobIn(txn, id, namespace);
      if (!job) throw notFound(`job "${id}"`);
      const { child, evaluation } = dispatch(txn, this.ctx.scheduler, job, request);
      return { DispatchedJobID: child.ID, EvalID: evaluation.ID, EvalCreateIndex: txn.index, JobCreateIndex: child.CreateIndex, Index: txn.index };
    });
  }

  /** GET /v1/job/:id/scale. */
  scaleStatus(id: string, namespace: string = DEFAULT_NAMESPACE): JobScaleStatus {
    const job = this.get(id, namespace);
    const allocs = allocsOfJob(this.ctx.store.read.allocs.ofGroup(job.ID), job).filter((alloc) => !isAllocTerminal(alloc));
    return {
      JobID: job.ID,
      Namespace: job.Namespace,
      JobCreateIndex: job.CreateIndex,
      JobModifyIndex: job.JobModifyIndex,
      JobStopped: job.Stop,
      TaskGroups: Object.fromEntries(
        job.TaskGroups.map((group) => {
          const mine = allocs.filter((alloc) => alloc.TaskGroup === group.Name);
          const running = mine.filter((alloc) => alloc.ClientStatus === "running").length;
          const healthy = mine.filter((alloc) => alloc.DeploymentStatus?.Healthy === true).length;
          const unhealthy = mine.filter((alloc) => alloc.DeploymentStatus?.Healthy === false).length;
          const events = this.ctx.store.read.scalingEvents.get(job.ID)?.ScalingEvents[group.Name] ?? null;
          return [group.Name, { Desired: group.Count, Placed: mine.length, Running: running, Healthy: healthy, Unhealthy: unhealthy, Events: events }];
        }),
      ),
    };
  }

  /**
   * DELETE /v1/job/:id: stops the job (a new version with Stop), or with
   * `purge` removes it. A job that is not there is already gone: Nomad 1.x
   * answers that with success and no evaluation (nomad/job_endpoint.go),
   * changing nothing.
   */
  deregister(id: string, purge: boolean, namespace: string = DEFAULT_NAMESPACE): JobDeregisterResponse {
    return this.ctx.store.write((txn) => {
      const job = jobIn(txn, id, namespace);
      if (!job) return { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 };
      let jobModifyIndex = job.JobModifyIndex;
      if (purge) {
        txn.jobs.delete(id);
        if (txn.periodicLaunches.get(id)) txn.periodicLaunches.delete(id);
        if (txn.scalingEvents.get(id)) txn.scalingEvents.delete(id);
      } else if (!job.Stop) jobModifyIndex = storeVersion(txn, { ...job, Stop: true }, job).JobModifyIndex;
      const evaluation = evaluate(txn, this.ctx.scheduler, id, "job-deregister");
      if (purge) for (const alloc of allocsOfJob(txn.allocs.values(), job)) if (isFinishedOrphan(txn, alloc)) txn.allocs.delete(alloc.ID);
      return { EvalID: evaluation.ID, EvalCreateIndex: txn.index, JobModifyIndex: jobModifyIndex, Index: txn.index };
    });
  }

  list(prefix?: string, inNamespace: (namespace: string) => boolean = EVERY_NAMESPACE): JobListStub[] {
    const { store } = this.ctx;
    const { read } = store;
    // One pass over each table for the whole list: scanning them per job made a list of n jobs read every alloc n times.
    // A job in memory has its whole group there (tiered.ts), so memory's allocs and evals are all its summary needs.
    const allocs = groupBy(read.allocs.hotValues(), (alloc) => alloc.JobID);
    const evals = groupBy(read.evals.hotValues(), (evaluation) => evaluation.JobID);
    const children = groupBy(store.jobParents(), (job) => job.ParentID);
    const stubOf = (job: Job) => jobListStub(job, summaryOf(job, allocs.get(job.ID) ?? [], evals.get(job.ID) ?? [], children.get(job.ID) ?? []));
    const listed: { ID: string; Namespace: string; stub: () => JobListStub }[] = [];
    for (const job of read.jobs.hotValues()) listed.push({ ID: job.ID, Namespace: job.Namespace, stub: () => stubOf(job) });
    for (const cold of store.coldJobs.listed()) listed.push({ ...cold, stub: () => this.coldListStub(cold.ID, children.get(cold.ID) ?? []) });
    return byPrefix(listed, prefix, inNamespace).map((item) => item.stub());
  }

  /**
   * A finished job's list stub: its group cannot change while it only lives
   * in SQLite, so the stub is made once (from the stored group) and its text
   * kept; a parent's is made each time (its children still change).
   */
  private coldListStub(id: string, children: Iterable<Pick<Job, "ParentID" | "Status">>): JobListStub {
    const { store } = this.ctx;
    const kept = store.coldJobs.listStub(id);
    if (kept !== undefined) return parsedWithText<JobListStub>(kept);
    const job = store.read.jobs.get(id)!;
    const stub = Object.freeze(jobListStub(job, summaryOf(job, store.read.allocs.ofGroup(id), store.read.evals.ofGroup(id), children)));
    if (!launchesChildren(job)) store.keepListStub(id, jsonTextOf(stub));
    return stub;
  }

  get(id: string, namespace: string = DEFAULT_NAMESPACE): Job {
    const job = jobIn(this.ctx.store.read, id, namespace);
    if (!job) throw notFound(`job "${id}"`);
    return job;
  }

  /** Kept versions of the job, newest first, and with `diffs` what each changed from the one before it. */
  versionsWithDiffs(id: string, diffs: boolean, namespace: string = DEFAULT_NAMESPACE): { Versions: Job[]; Diffs: JobDiff[] | null } {
    const versions = this.versions(id, namespace);
    if (!diffs) return { Versions: versions, Diffs: null };
    return { Versions: versions, Diffs: versions.slice(0, -1).map((version, i) => diffJobs(versions[i + 1], version)) };
  }

  /** Kept versions of the job, newest first. */
  versions(id: string, namespace: string = DEFAULT_NAMESPACE): Job[] {
    return versionsOf(this.ctx.store.read.versions.ofGroup(id), this.get(id, namespace));
  }

  /** The job's allocs, newest first; `all` adds those of an earlier job purged under the same ID. */
  allocations(id: string, all = false, namespace: string = DEFAULT_NAMESPACE): AllocListStub[] {
    const job = this.get(id, namespace);
    const ofId = this.ctx.store.read.allocs.ofGroup(id);
    const allocs = all ? ofId.filter((alloc) => alloc.Namespace === namespace) : allocsOfJob(ofId, job);
    return allocs
      .sort((a, b) => b.CreateIndex - a.CreateIndex)
      .map((alloc) => this.ctx.store.stub(alloc));
  }

  evaluations(id: string, namespace: string = DEFAULT_NAMESPACE): Evaluation[] {
    this.get(id, namespace);
    return evalsOfJob(this.ctx.store.read.evals.ofGroup(id), id).sort((a, b) => b.CreateIndex - a.CreateIndex);
  }

  summary(id: string, namespace: string = DEFAULT_NAMESPACE): JobSummary {
    const { read } = this.ctx.store;
    return summaryOf(this.get(id, namespace), read.allocs.ofGroup(id), read.evals.ofGroup(id), this.ctx.store.jobParents());
  }
}

/** The job's summary from rows that include its allocs, evals and (for a periodic or parameterized parent) child jobs. */
function summaryOf(job: Job, allocs: Iterable<Allocation>, evals: Iterable<Evaluation>, jobs: Iterable<Pick<Job, "ParentID" | "Status">>): JobSummary {
  const children = launchesChildren(job) ? childrenSummary(jobs, job.ID) : undefined;
  return jobSummary(job, allocsOfJob(allocs, job), evalsOfJob(evals, job.ID), children);
}
