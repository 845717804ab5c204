/**
 * What a job's allocations should become (Nomad's allocReconciler, for one
 * node): compares the job's groups and counts with the allocs it has and
 * its current deployment, and answers which allocs to stop, which to move
 * to the new version in place, which to replace, where canaries go, which
 * failed allocs to reschedule now or later, and what happens to the
 * deployment.
 *
 *   job stopped or purged ──────────> stop every alloc still told to run; cancel the deployment
 *   deployment of an older version ─> cancelled ("Cancelled due to newer version of job");
 *                                      its unpromoted canaries stopped
 *   per group:
 *     alloc's group gone / index >= count / index taken by a newer alloc ──> stop
 *     failed alloc, reschedule policy allows: due now ──> replace at its index (RescheduleTracker)
 *                                             later ──> follow-up evaluation at the due time
 *     alloc of an older version: group unchanged but for count ──> in place
 *                                otherwise ──> destructive update:
 *       canary > 0 and not promoted ──> place `canary` new allocs beside the old (same names);
 *                                       nothing else moves until promotion
 *       then at most max_parallel at a time, less the deployment's allocs not yet healthy
 *       (none while the deployment is paused or failed): stop the old, place the new at its index
 *     promoted canary ──> takes over its index; the old alloc there is stopped
 *     index with no alloc ──> place (linked to the last alloc stopped there)
 *   a new deployment when the version changes what runs, or the job first runs, under an `update`
 *   every group done and healthy (canaries promoted) ──> deployment successful
 *
 * An alloc that finished on the client but is still told to run (a batch
 * task that completed) keeps its index: it is not run again.
 */
import { randomUUID } from "node:crypto";
import { groupBy } from "../../lib/group-by.ts";
import { allocIndex, type Allocation } from "../../structs/alloc.ts";
import {
  DEPLOYMENT_DESCRIPTION,
  isDeploymentActive,
  requiresPromotion,
  hasAutoPromote,
  type Deployment,
  type DeploymentState,
  type DeploymentStatus,
} from "../../structs/deployment.ts";
import type { Job, TaskGroup, UpdateStrategy } from "../../structs/job.ts";
import { GO_ZERO_TIME } from "../../structs/node.ts";
import { nextRescheduleTime, RESCHEDULE_WINDOW_NS, RESCHEDULED } from "./reschedule.ts";

/** Nomad's DesiredDescription texts. */
export const DESIRED = {
  notNeeded: "alloc not needed due to job update",
  updating: "alloc is being updated due to job update",
  stopped: "alloc was stopped by the operator",
  rescheduled: RESCHEDULED,
} as const;

export interface PlaceRequest {
  group: TaskGroup;
  index: number;
  /** The alloc this one follows (replaced, rescheduled, or last stopped at the index). */
  previous: Allocation | undefined;
  canary: boolean;
  /** A replacement for a failed alloc: it carries the reschedule history. */
  reschedule: boolean;
  /** A system or sysbatch alloc's node: it is placed there or nowhere. */
  nodeId?: string;
}

export interface DeploymentUpdate {
  deployment: Deployment;
  status: DeploymentStatus;
  description: string;
}

export interface ReconcileResult {
  /** Allocs that stay as they are. */
  ignore: Allocation[];
  stop: { alloc: Allocation; description: string }[];
  inPlace: Allocation[];
  place: PlaceRequest[];
  /** Failed allocs whose reschedule is due later: a follow-up evaluation at `at` (ns). */
  rescheduleLater: { alloc: Allocation; at: number }[];
  /** The deployment new and updated allocs belong to: a working copy of the current one, or a new one. */
  deployment: Deployment | undefined;
  deploymentIsNew: boolean;
  /** Status changes: deployments cancelled, or this one complete. */
  deploymentUpdates: DeploymentUpdate[];
}

export interface ReconcileInput {
  job: Job | undefined;
  /** Every alloc of this job's current instance (not those of a job purged under the same ID). */
  allocs: readonly Allocation[];
  /** The job's latest deployment, if any. */
  deployment: Deployment | undefined;
  /** This write's time, ns. */
  now: number;
  /** The evaluation being processed: a follow-up one reschedules the allocs that point at it. */
  evalId: string;
}

/** The parts of a job an alloc's tasks see; any change to them restarts the tasks. */
function runtimeView(job: Job, group: TaskGroup): string {
  const { Count: _count, Scaling: _scaling, ...rest } = group;
  return JSON.stringify([rest, job.Name, job.Meta, job.Region, job.Datacenters]);
}

function needsReplacement(alloc: Allocation, job: Job, group: TaskGroup): boolean {
  return changesDestructively(alloc.Job, job, group);
}

/** Whether moving an alloc of `group` from `before` to `job` must replace it (rather than update it in place). */
export function changesDestructively(before: Job, job: Job, group: TaskGroup): boolean {
  const old = before.TaskGroups.find((candidate) => candidate.Name === group.Name);
  return !old || runtimeView(before, old) !== runtimeView(job, group);
}

/** Nomad's UpdateStrategy.IsEmpty: no update block, or max_parallel 0, means no deployment. */
export function updateStrategy(group: TaskGroup): UpdateStrategy | undefined {
  return group.Update && group.Update.MaxParallel > 0 ? group.Update : undefined;
}

function freshState(strategy: UpdateStrategy | undefined): DeploymentState {
  return {
    AutoRevert: strategy?.AutoRevert ?? false,
    AutoPromote: strategy?.AutoPromote ?? false,
    ProgressDeadline: strategy?.ProgressDeadline ?? 0,
    RequireProgressBy: GO_ZERO_TIME,
    Promoted: false,
    PlacedCanaries: [],
    DesiredCanaries: 0,
    DesiredTotal: 0,
    PlacedAllocs: 0,
    HealthyAllocs: 0,
    UnhealthyAllocs: 0,
  };
}

export function newDeployment(job: Job): Deployment {
  return {
    ID: randomUUID(),
    Namespace: job.Namespace,
    JobID: job.ID,
    JobVersion: job.Version,
    JobModifyIndex: job.ModifyIndex,
    JobSpecModifyIndex: job.JobModifyIndex,
    JobCreateIndex: job.CreateIndex,
    IsMultiregion: false,
    TaskGroups: {},
    Status: "running",
    StatusDescription: DEPLOYMENT_DESCRIPTION.running,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

const byIndex = (a: Allocation, b: Allocation) => allocIndex(a.Name) - allocIndex(b.Name);
const newestFirst = (a: Allocation, b: Allocation) => b.CreateIndex - a.CreateIndex;

class Reconciler {
  readonly result: ReconcileResult = {
    ignore: [],
    stop: [],
    inPlace: [],
    place: [],
    rescheduleLater: [],
    deployment: undefined,
    deploymentIsNew: false,
    deploymentUpdates: [],
  };
  private deployment: Deployment | undefined;
  private oldDeployment: Deployment | undefined;
  private paused = false;
  private failed = false;

  constructor(private readonly input: ReconcileInput) {}

  private stop(alloc: Allocation, description: string): void {
    this.result.stop.push({ alloc, description });
  }

  compute(): ReconcileResult {
    const { job, allocs } = this.input;
    this.settleDeployments();
    if (!job || job.Stop) {
      for (const alloc of allocs) if (alloc.DesiredStatus === "run") this.stop(alloc, DESIRED.notNeeded);
      return this.result;
    }
    this.paused = this.deployment?.Status === "paused" || this.deployment?.Status === "pending";
    this.failed = this.deployment?.Status === "failed";

    const byGroup = groupBy(allocs, (alloc) => alloc.TaskGroup);
    let complete = true;
    for (const [name, groupAllocs] of byGroup) {
      if (job.TaskGroups.some((group) => group.Name === name)) continue;
      for (const alloc of groupAllocs) if (alloc.DesiredStatus === "run") this.stop(alloc, DESIRED.notNeeded);
    }
    for (const group of job.TaskGroups) complete = this.computeGroup(group, byGroup.get(group.Name) ?? []) && complete;

    const deployment = this.deployment;
    if (deployment && complete && isDeploymentActive(deployment)) {
      this.result.deploymentUpdates.push({ deployment, status: "successful", description: DEPLOYMENT_DESCRIPTION.successful });
    }
    if (deployment && this.result.deploymentIsNew && requiresPromotion(deployment)) {
      deployment.StatusDescription = hasAutoPromote(deployment) ? DEPLOYMENT_DESCRIPTION.autoPromotion : DEPLOYMENT_DESCRIPTION.needsPromotion;
    }
    this.result.deployment = deployment;
    return this.result;
  }

  /** Nomad's cancelDeployments: the current deployment, or none when it belongs to an older version or is over. */
  private settleDeployments(): void {
    const { job } = this.input;
    const current = this.input.deployment ? structuredClone(this.input.deployment) : undefined;
    if (!current) return;
    if (!job || job.Stop) {
      if (isDeploymentActive(current)) this.result.deploymentUpdates.push({ deployment: current, status: "cancelled", description: DEPLOYMENT_DESCRIPTION.stoppedJob });
      this.oldDeployment = current;
      return;
    }
    if (current.JobCreateIndex !== job.CreateIndex || current.JobVersion !== job.Version) {
      if (isDeploymentActive(current)) this.result.deploymentUpdates.push({ deployment: current, status: "cancelled", description: DEPLOYMENT_DESCRIPTION.newerJob });
      this.oldDeployment = current;
      return;
    }
    if (current.Status === "successful" || current.Status === "cancelled") {
      this.oldDeployment = current;
      return;
    }
    this.deployment = current;
  }

  /** Canaries of an older deployment, or of a failed one, that were never promoted: they go. */
  private staleCanaries(): Set<string> {
    const ids = new Set<string>();
    const unpromoted = (deployment: Deployment | undefined) => {
      for (const state of Object.values(deployment?.TaskGroups ?? {})) if (!state.Promoted) for (const id of state.PlacedCanaries) ids.add(id);
    };
    unpromoted(this.oldDeployment);
    if (this.failed) unpromoted(this.deployment);
    return ids;
  }

  private computeGroup(group: TaskGroup, all: readonly Allocation[]): boolean {
    const { job: maybeJob, now, evalId } = this.input;
    const job = maybeJob!;
    const strategy = updateStrategy(group);
    const existing = this.deployment?.TaskGroups[group.Name];
    const state = existing ?? freshState(strategy);

    const stale = this.staleCanaries();
    let live = all.filter((alloc) => alloc.DesiredStatus === "run");
    for (const alloc of live) if (stale.has(alloc.ID)) this.stop(alloc, DESIRED.notNeeded);
    live = live.filter((alloc) => !stale.has(alloc.ID));

    const canaryIds = new Set(Object.values(this.deployment?.TaskGroups ?? {}).flatMap((groupState) => groupState.PlacedCanaries));
    let canaryState = state.DesiredCanaries > 0 && !state.Promoted;

    // Failed allocs: reschedule now, later, or never.
    const rescheduleNow: Allocation[] = [];
    let rescheduleLater = 0;
    const untainted: Allocation[] = [];
    for (const alloc of live) {
      const inActiveDeployment = this.deployment !== undefined && alloc.DeploymentID === this.deployment.ID && isDeploymentActive(this.deployment);
      const due = alloc.ClientStatus === "failed" && alloc.NextAllocation === "" && !inActiveDeployment ? nextRescheduleTime(alloc) : undefined;
      if (due === undefined) untainted.push(alloc);
      else if (alloc.FollowupEvalID === evalId || due - now <= RESCHEDULE_WINDOW_NS) rescheduleNow.push(alloc);
      else {
        untainted.push(alloc);
        rescheduleLater++;
        if (alloc.FollowupEvalID === "") this.result.rescheduleLater.push({ alloc, at: due });
      }
    }

    const canaries = untainted.filter((alloc) => canaryIds.has(alloc.ID));
    const others = untainted.filter((alloc) => !canaryIds.has(alloc.ID)).sort(newestFirst);
    const covered = new Set<number>();
    for (const canary of [...canaries].sort(newestFirst)) {
      const index = allocIndex(canary.Name);
      if (index >= group.Count) this.stop(canary, DESIRED.notNeeded);
      else if (!canaryState) {
        // Promoted: the canary owns its index; the old alloc there goes.
        if (covered.has(index)) this.stop(canary, DESIRED.notNeeded);
        else covered.add(index);
      }
    }
    /** The alloc's index if it may keep it; otherwise (beyond the count, or taken) it is stopped. */
    const claim = (alloc: Allocation): number | undefined => {
      const index = allocIndex(alloc.Name);
      if (index < group.Count && !covered.has(index)) return index;
      this.stop(alloc, DESIRED.notNeeded);
      return undefined;
    };
    const destructive: Allocation[] = [];
    const inPlace: Allocation[] = [];
    for (const alloc of others) {
      const index = claim(alloc);
      if (index === undefined) continue;
      covered.add(index);
      if (alloc.Job.JobModifyIndex === job.JobModifyIndex) this.result.ignore.push(alloc);
      else if (needsReplacement(alloc, job, group)) destructive.push(alloc);
      else inPlace.push(alloc);
    }
    this.result.inPlace.push(...inPlace);
    if (!existing) state.DesiredTotal += destructive.length + inPlace.length;

    const requireCanary = destructive.length > 0 && strategy !== undefined && canaries.length < strategy.Canary && !state.Promoted;
    if (requireCanary) state.DesiredCanaries = strategy.Canary;
    if (requireCanary && !this.paused && !this.failed) {
      const taken = new Set(canaries.map((canary) => allocIndex(canary.Name)));
      const indexes = [...destructive].sort(byIndex).map((alloc) => allocIndex(alloc.Name)).filter((index) => !taken.has(index));
      for (const index of indexes.slice(0, strategy.Canary - canaries.length)) {
        this.result.place.push({ group, index, previous: undefined, canary: true, reschedule: false });
      }
    }
    canaryState = state.DesiredCanaries > 0 && !state.Promoted;
    let limit = this.limit(group, strategy, untainted, destructive.length, canaryState);

    const place: PlaceRequest[] = [];
    const rescheduledIndexes = new Set<number>();
    for (const alloc of rescheduleNow) {
      const index = claim(alloc);
      if (index === undefined) continue;
      rescheduledIndexes.add(index);
      place.push({ group, index, previous: alloc, canary: false, reschedule: true });
    }
    for (let index = 0; index < group.Count; index++) {
      if (covered.has(index) || rescheduledIndexes.has(index)) continue;
      place.push({ group, index, previous: lastStopped(all, group.Name, index), canary: false, reschedule: false });
    }
    if (!existing) state.DesiredTotal += place.length;

    const ready = !this.paused && !this.failed && !canaryState;
    if (ready) {
      for (const request of place) {
        this.result.place.push(request);
        if (request.reschedule) this.stop(request.previous!, DESIRED.rescheduled);
      }
      limit -= Math.min(place.length, limit);
      const updating = [...destructive].sort(byIndex);
      for (const alloc of updating.slice(0, limit)) {
        this.stop(alloc, DESIRED.updating);
        this.result.place.push({ group, index: allocIndex(alloc.Name), previous: alloc, canary: false, reschedule: false });
      }
      this.result.ignore.push(...updating.slice(limit));
    } else {
      // Failed allocs are still replaced, unless they belong to the deployment that failed.
      for (const request of place) {
        const previous = request.previous;
        if (!request.reschedule || (this.failed && previous?.DeploymentID === this.deployment?.ID)) continue;
        this.result.place.push(request);
        this.stop(previous!, DESIRED.rescheduled);
      }
      this.result.ignore.push(...destructive);
    }

    const updatingSpec = destructive.length > 0 || inPlace.length > 0;
    const hadRunning = all.some((alloc) => alloc.Job.JobModifyIndex === job.JobModifyIndex);
    if (!existing && strategy && state.DesiredTotal !== 0 && (!hadRunning || updatingSpec)) {
      if (!this.deployment) {
        this.deployment = newDeployment(job);
        this.result.deploymentIsNew = true;
      }
      this.deployment.TaskGroups[group.Name] = state;
    }

    let complete = destructive.length + inPlace.length + place.length + rescheduleNow.length + rescheduleLater === 0 && !requireCanary;
    const tracked = this.deployment?.TaskGroups[group.Name];
    if (complete && tracked) {
      complete = tracked.HealthyAllocs >= Math.max(tracked.DesiredTotal, tracked.DesiredCanaries) && (tracked.DesiredCanaries === 0 || tracked.Promoted);
    }
    return complete;
  }

  /** Nomad's computeLimit: how many destructive updates may start now. */
  private limit(group: TaskGroup, strategy: UpdateStrategy | undefined, untainted: readonly Allocation[], destructive: number, canaryState: boolean): number {
    if (!strategy || destructive === 0) return group.Count;
    if (this.paused || this.failed || canaryState) return 0;
    let limit = strategy.MaxParallel;
    const deployment = this.deployment;
    if (deployment) {
      for (const alloc of untainted) {
        if (alloc.DeploymentID !== deployment.ID) continue;
        if (alloc.DeploymentStatus?.Healthy === false) return 0;
        if (alloc.DeploymentStatus?.Healthy !== true) limit--;
      }
    }
    return Math.max(0, limit);
  }
}

export function reconcile(input: ReconcileInput): ReconcileResult {
  return new Reconciler(input).compute();
}

/** The newest alloc stopped at this index and not yet replaced: the one a new alloc follows. */
function lastStopped(allocs: readonly Allocation[], group: string, index: number): Allocation | undefined {
  let found: Allocation | undefined;
  for (const alloc of allocs) {
    if (alloc.DesiredStatus === "run" || alloc.NextAllocation !== "" || alloc.TaskGroup !== group || allocIndex(alloc.Name) !== index) continue;
    if (!found || alloc.CreateIndex > found.CreateIndex) found = alloc;
  }
  return found;
}
