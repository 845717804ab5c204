/**
 * Scheduling inside a write transaction: reconcile a job (reconcile.ts),
 * stop and update its allocs, place what is missing, move its deployment
 * along, and record the evaluation. What does not fit waits in the job's
 * one blocked evaluation; `retryBlocked` runs those again whenever room may
 * have appeared (an alloc finished, a node registered), highest priority
 * first. A failed alloc whose reschedule is due later gets a pending
 * follow-up evaluation that the server's timer runs at its WaitUntil.
 *
 *   evaluate(job) ──> reconcile ──> stop / in place ──> place (Planner)
 *                        │                               │ some did not fit
 *                        │                               ▼
 *                        │   eval "complete" + FailedTGAllocs ──> eval "blocked" (queued counts)
 *                        ├──> deployment: created, placements counted, cancelled, successful (version Stable)
 *                        └──> reschedule later ──> eval "pending" (WaitUntil), alloc.FollowupEvalID
 *   retryBlocked() ──> place again ──> all placed: blocked eval "complete"
 */
import { randomUUID } from "node:crypto";
import { allocName, NO_TRANSITION, type Allocation, type AllocMetric } from "../../structs/alloc.ts";
import { isoOfNanos } from "../../structs/common.ts";
import type { Deployment } from "../../structs/deployment.ts";
import type { Evaluation, EvalTrigger } from "../../structs/evaluation.ts";
import { DEFAULT_NAMESPACE, launchesChildren, type Job } from "../../structs/job.ts";
import { GO_ZERO_TIME } from "../../structs/node.ts";
import { holdsResources } from "../../structs/resources.ts";
import { latestDeployment } from "../deployments/query.ts";
import { setVersionStable } from "../deployments/stable.ts";
import type { WriteTxn } from "../state/store.ts";
import { allocsOfJob, evalsOfJob, jobStatus } from "../status.ts";
import { Planner } from "./placement.ts";
import { reconcile, type ReconcileInput, type ReconcileResult } from "./reconcile.ts";
import { isSystemType, reconcileSystem } from "./reconcile-system.ts";
import { trackerFor } from "./reschedule.ts";

export interface SchedulerDeps {
  /** Ports bound on the host, read once per placement round. */
  hostBoundPorts: () => ReadonlySet<number>;
}

interface Outcome {
  placed: number;
  changed: boolean;
  failed: Record<string, AllocMetric>;
  queued: Record<string, number>;
  deploymentId: string;
}

/** The alloc rewritten by the server at this transaction's index. */
function serverUpdate(txn: WriteTxn, alloc: Allocation, change: Partial<Allocation>): Allocation {
  return { ...alloc, ...change, ModifyIndex: txn.index, AllocModifyIndex: txn.index, ModifyTime: txn.now };
}

/** What reconciling `jobId` starts from inside `txn`. */
function reconcileInput(txn: WriteTxn, jobId: string, evalId: string): ReconcileInput {
  const job = txn.jobs.get(jobId);
  const allocs = job ? allocsOfJob(txn.allocs.values(), job) : txn.allocs.filter((alloc) => alloc.JobID === jobId);
  const deployment = job ? latestDeployment(txn.deployments.values(), job) : undefined;
  return { job, allocs, deployment, now: txn.now, evalId };
}

/** Writes a deployment's new status; a successful one marks its job version stable. */
function applyDeploymentStatus(txn: WriteTxn, deployment: Deployment, status: Deployment["Status"], description: string): void {
  const current = txn.deployments.get(deployment.ID) ?? deployment;
  txn.deployments.put(deployment.ID, { ...current, Status: status, StatusDescription: description, ModifyIndex: txn.index });
  if (status === "successful") setVersionStable(txn, deployment.JobID, deployment.JobVersion, true);
}

/** Brings one job's allocs in line with the job; `evalId` is recorded on the allocs it creates. */
/** What `jobId`'s allocs should become: by the system scheduler's rules for system and sysbatch jobs, else the generic reconciler's. */
export function reconcileJob(txn: WriteTxn, jobId: string, evalId: string): ReconcileResult {
  const job = txn.jobs.get(jobId);
  const input = reconcileInput(txn, jobId, evalId);
  return job && isSystemType(job) ? reconcileSystem(input, [...txn.nodes.values()]) : reconcile(input);
}

function schedule(txn: WriteTxn, deps: SchedulerDeps, jobId: string, evalId: string, trigger: EvalTrigger): Outcome {
  const job = txn.jobs.get(jobId);
  const plan = reconcileJob(txn, jobId, evalId);
  const outcome: Outcome = { placed: 0, changed: false, failed: {}, queued: {}, deploymentId: "" };

  for (const { alloc, description } of plan.stop) {
    txn.allocs.put(alloc.ID, serverUpdate(txn, txn.allocs.get(alloc.ID) ?? alloc, { DesiredStatus: "stop", DesiredDescription: description }));
    outcome.changed = true;
  }
  for (const update of plan.deploymentUpdates) {
    if (update.deployment.ID !== plan.deployment?.ID) applyDeploymentStatus(txn, update.deployment, update.status, update.description);
  }
  if (!job) return outcome;

  const deployment = plan.deployment;
  let deploymentDirty = plan.deploymentIsNew;
  if (deployment && plan.deploymentIsNew) {
    deployment.CreateIndex = txn.index;
    outcome.changed = true;
  }
  outcome.deploymentId = deployment?.ID ?? "";
  const tracks = (group: string) => deployment !== undefined && deployment.TaskGroups[group] !== undefined;

  scheduleFollowups(txn, job, plan, evalId, trigger);
  if (plan.rescheduleLater.length > 0) outcome.changed = true;

  const version = txn.versions.get(job.JobModifyIndex) ?? job;
  for (const alloc of plan.inPlace) {
    const current = txn.allocs.get(alloc.ID) ?? alloc;
    const deploymentId = tracks(alloc.TaskGroup) ? deployment!.ID : current.DeploymentID;
    // A new deployment judges the alloc's health afresh, and counts it as placed (as Nomad's state store does).
    const joined = deploymentId !== current.DeploymentID;
    txn.allocs.put(alloc.ID, serverUpdate(txn, current, { Job: version, DeploymentID: deploymentId, DeploymentStatus: joined ? null : current.DeploymentStatus }));
    if (joined && tracks(alloc.TaskGroup)) {
      deployment!.TaskGroups[alloc.TaskGroup]!.PlacedAllocs++;
      deploymentDirty = true;
    }
    outcome.changed = true;
  }

  if (plan.place.length > 0) {
    const planner = new Planner([...txn.nodes.values()], txn.allocs.filter(holdsResources), deps.hostBoundPorts());
    for (const { group, index, previous, canary, reschedule, nodeId } of plan.place) {
      const placement = planner.place(version, group, nodeId);
      // A node the job's constraints rule out simply does not run it (Nomad's system scheduler); only no room is a failure.
      if (!placement.ok && nodeId !== undefined && placement.metric.NodesExhausted === 0) continue;
      if (!placement.ok) {
        const failed = outcome.failed[group.Name];
        if (failed) failed.CoalescedFailures++;
        else outcome.failed[group.Name] = placement.metric;
        outcome.queued[group.Name] = (outcome.queued[group.Name] ?? 0) + 1;
        continue;
      }
      const id = randomUUID();
      const state = deployment?.TaskGroups[group.Name];
      txn.allocs.put(id, {
        ID: id,
        Namespace: job.Namespace,
        EvalID: evalId,
        Name: allocName(job.ID, group.Name, index),
        NodeID: placement.node.ID,
        NodeName: placement.node.Name,
        JobID: job.ID,
        TaskGroup: group.Name,
        AllocatedResources: placement.resources,
        DesiredStatus: "run",
        DesiredDescription: "",
        DesiredTransition: { ...NO_TRANSITION },
        ClientStatus: "pending",
        ClientDescription: "",
        TaskStates: null,
        DeploymentStatus: canary ? { Healthy: null, Timestamp: null, Canary: true, ModifyIndex: txn.index } : null,
        DeploymentID: state ? deployment!.ID : "",
        RescheduleTracker: reschedule && previous ? trackerFor(previous, txn.now) : null,
        FollowupEvalID: "",
        PreviousAllocation: previous?.ID ?? "",
        NextAllocation: "",
        Metrics: placement.metric,
        CreateIndex: txn.index,
        ModifyIndex: txn.index,
        AllocModifyIndex: txn.index,
        CreateTime: txn.now,
        ModifyTime: txn.now,
        Job: version,
      });
      if (previous) {
        const current = txn.allocs.get(previous.ID) ?? previous;
        txn.allocs.put(previous.ID, { ...current, NextAllocation: id, ModifyIndex: txn.index, ModifyTime: txn.now });
      }
      if (state) {
        state.PlacedAllocs++;
        if (canary) state.PlacedCanaries.push(id);
        if (state.RequireProgressBy === GO_ZERO_TIME && state.ProgressDeadline > 0) state.RequireProgressBy = isoOfNanos(txn.now + state.ProgressDeadline);
        deploymentDirty = true;
      }
      outcome.placed++;
      outcome.changed = true;
    }
  }

  if (deployment) {
    const finished = plan.deploymentUpdates.find((update) => update.deployment.ID === deployment.ID);
    if (deploymentDirty) txn.deployments.put(deployment.ID, { ...deployment, ModifyIndex: txn.index });
    if (finished) applyDeploymentStatus(txn, deployment, finished.status, finished.description);
  }
  return outcome;
}

/**
 * One pending follow-up evaluation per failed alloc whose reschedule is due
 * later; the alloc points at it, so reconciling under that evaluation
 * replaces it.
 */
function scheduleFollowups(txn: WriteTxn, job: Job, plan: ReconcileResult, evalId: string, trigger: EvalTrigger): void {
  for (const { alloc, at } of plan.rescheduleLater) {
    const followup: Evaluation = {
      ...newEvaluation(txn, job, job.ID, "alloc-failure"),
      Status: "pending",
      StatusDescription: `created for delayed rescheduling (triggered by ${trigger})`,
      PreviousEval: evalId,
      WaitUntil: isoOfNanos(at),
    };
    txn.evals.put(followup.ID, followup);
    const current = txn.allocs.get(alloc.ID) ?? alloc;
    txn.allocs.put(alloc.ID, { ...current, FollowupEvalID: followup.ID, ModifyIndex: txn.index, ModifyTime: txn.now });
  }
}

function newEvaluation(txn: WriteTxn, job: Job | undefined, jobId: string, trigger: EvalTrigger): Evaluation {
  return {
    ID: randomUUID(),
    Namespace: job?.Namespace ?? DEFAULT_NAMESPACE,
    Priority: job?.Priority ?? 50,
    Type: job?.Type ?? "service",
    TriggeredBy: trigger,
    JobID: jobId,
    JobModifyIndex: job?.JobModifyIndex ?? 0,
    NodeID: "",
    Status: "complete",
    StatusDescription: "",
    FailedTGAllocs: null,
    QueuedAllocations: {},
    BlockedEval: "",
    PreviousEval: "",
    DeploymentID: "",
    WaitUntil: GO_ZERO_TIME,
    CreateIndex: txn.index,
    ModifyIndex: txn.index,
    CreateTime: txn.now,
    ModifyTime: txn.now,
  };
}

/** Sets the job's Status from its allocs and evaluations, when it changed. */
export function refreshJobStatus(txn: WriteTxn, jobId: string): void {
  const job = txn.jobs.get(jobId);
  if (!job) return;
  // A periodic or parameterized parent runs nothing itself, and a system job runs wherever it may: running until stopped (Nomad's getJobStatus).
  const status = launchesChildren(job) || job.Type === "system" ? (job.Stop ? "dead" : "running") : jobStatus(allocsOfJob(txn.allocs.values(), job), evalsOfJob(txn.evals.values(), jobId));
  if (status !== job.Status) txn.jobs.put(jobId, { ...job, Status: status, ModifyIndex: txn.index });
}

/** Schedules `jobId` now and records the evaluation (and a blocked one for what did not fit). */
export function evaluate(txn: WriteTxn, deps: SchedulerDeps, jobId: string, trigger: EvalTrigger, existing?: Evaluation): Evaluation {
  const job = txn.jobs.get(jobId);
  // A follow-up evaluation keeps its ID: the allocs waiting for it name it.
  const evaluation: Evaluation = existing
    ? { ...existing, Status: "complete", StatusDescription: "", ModifyIndex: txn.index, ModifyTime: txn.now }
    : newEvaluation(txn, job, jobId, trigger);
  const outcome = schedule(txn, deps, jobId, evaluation.ID, trigger);
  evaluation.DeploymentID = outcome.deploymentId;

  for (const old of txn.evals.filter((item) => item.JobID === jobId && item.Status === "blocked")) {
    txn.evals.put(old.ID, {
      ...old,
      Status: "canceled",
      StatusDescription: `superseded by evaluation ${evaluation.ID}`,
      ModifyIndex: txn.index,
      ModifyTime: txn.now,
    });
  }
  if (Object.keys(outcome.failed).length > 0) {
    const blocked: Evaluation = {
      ...newEvaluation(txn, job, jobId, "queued-allocs"),
      Status: "blocked",
      StatusDescription: "waiting for room on a node",
      FailedTGAllocs: outcome.failed,
      QueuedAllocations: outcome.queued,
      PreviousEval: evaluation.ID,
    };
    evaluation.FailedTGAllocs = outcome.failed;
    evaluation.QueuedAllocations = outcome.queued;
    evaluation.BlockedEval = blocked.ID;
    txn.evals.put(blocked.ID, blocked);
  }
  txn.evals.put(evaluation.ID, evaluation);
  refreshJobStatus(txn, jobId);
  return evaluation;
}

/** The system and sysbatch jobs that want allocs (not stopped; a periodic or parameterized parent places none itself). */
export function systemJobs(txn: WriteTxn): Job[] {
  return txn.jobs.filter((job) => isSystemType(job) && !job.Stop && !launchesChildren(job));
}

/** Evaluates every system and sysbatch job: a node appeared or came back, and they belong on it. */
export function evaluateSystemJobs(txn: WriteTxn, deps: SchedulerDeps, trigger: EvalTrigger): void {
  for (const job of systemJobs(txn)) evaluate(txn, deps, job.ID, trigger);
}

/** Tries every blocked evaluation again, highest priority first; those that now place everything complete. */
export function retryBlocked(txn: WriteTxn, deps: SchedulerDeps): void {
  const blocked = txn.evals
    .filter((evaluation) => evaluation.Status === "blocked")
    .sort((a, b) => b.Priority - a.Priority || a.CreateIndex - b.CreateIndex);
  for (const evaluation of blocked) {
    const outcome = schedule(txn, deps, evaluation.JobID, evaluation.ID, "queued-allocs");
    if (!outcome.changed) continue;
    const done = Object.keys(outcome.failed).length === 0;
    txn.evals.put(evaluation.ID, {
      ...evaluation,
      Status: done ? "complete" : "blocked",
      StatusDescription: done ? "" : evaluation.StatusDescription,
      FailedTGAllocs: done ? evaluation.FailedTGAllocs : outcome.failed,
      QueuedAllocations: outcome.queued,
      ModifyIndex: txn.index,
      ModifyTime: txn.now,
    });
    refreshJobStatus(txn, evaluation.JobID);
  }
}
