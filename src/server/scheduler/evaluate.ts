/**
 * Scheduling inside a write transaction: reconcile a job, stop and update
 * its allocs, place what is missing, and record the evaluation. What does
 * not fit waits in the job's one blocked evaluation; `retryBlocked` runs
 * those again whenever room may have appeared (an alloc finished, a node
 * registered), highest priority first.
 *
 *   evaluate(job) ──> reconcile ──> stop / in place ──> place (Planner)
 *                                                         │ some did not fit
 *                                                         ▼
 *                          eval "complete" + FailedTGAllocs ──> eval "blocked" (queued counts)
 *   retryBlocked() ──> place again ──> all placed: blocked eval "complete"
 */
import { randomUUID } from "node:crypto";
import { allocName, NO_TRANSITION, type Allocation, type AllocMetric } from "../../structs/alloc.ts";
import type { Evaluation, EvalTrigger } from "../../structs/evaluation.ts";
import { DEFAULT_NAMESPACE, type Job } from "../../structs/job.ts";
import type { WriteTxn } from "../state/store.ts";
import { allocsOfJob, evalsOfJob, jobStatus } from "../status.ts";
import { Planner } from "./placement.ts";
import { reconcile } from "./reconcile.ts";
import { holdsResources } from "../../structs/resources.ts";

export interface SchedulerDeps {
  /** Ports bound on the host, read once per placement round. */
  hostBoundPorts: () => ReadonlySet<number>;
}

interface Outcome {
  placed: number;
  changed: boolean;
  failed: Record<string, AllocMetric>;
  queued: Record<string, number>;
}

/** The alloc rewritten by the server at this transaction's index. */
function serverUpdate(txn: WriteTxn, alloc: Allocation, change: Partial<Allocation>): Allocation {
  return { ...alloc, ...change, ModifyIndex: txn.index, AllocModifyIndex: txn.index, ModifyTime: txn.now };
}

/** Brings one job's allocs in line with the job; `evalId` is recorded on the allocs it creates. */
function schedule(txn: WriteTxn, deps: SchedulerDeps, jobId: string, evalId: string): Outcome {
  const job = txn.jobs.get(jobId);
  const allocs = job ? allocsOfJob(txn.allocs.values(), job) : txn.allocs.filter((alloc) => alloc.JobID === jobId);
  const plan = reconcile(job, allocs);
  const outcome: Outcome = { placed: 0, changed: false, failed: {}, queued: {} };

  for (const { alloc, description } of plan.stop) {
    txn.allocs.put(alloc.ID, serverUpdate(txn, alloc, { DesiredStatus: "stop", DesiredDescription: description }));
    outcome.changed = true;
  }
  if (!job || plan.inPlace.length + plan.place.length === 0) return outcome;

  const version = txn.versions.get(job.JobModifyIndex) ?? job;
  for (const alloc of plan.inPlace) {
    txn.allocs.put(alloc.ID, serverUpdate(txn, txn.allocs.get(alloc.ID) ?? alloc, { Job: version }));
    outcome.changed = true;
  }
  if (plan.place.length === 0) return outcome;

  const planner = new Planner([...txn.nodes.values()], txn.allocs.filter(holdsResources), deps.hostBoundPorts());
  for (const { group, index, previous } of plan.place) {
    const placement = planner.place(version, group);
    if (!placement.ok) {
      const failed = outcome.failed[group.Name];
      if (failed) failed.CoalescedFailures++;
      else outcome.failed[group.Name] = placement.metric;
      outcome.queued[group.Name] = (outcome.queued[group.Name] ?? 0) + 1;
      continue;
    }
    const id = randomUUID();
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
      DeploymentStatus: null,
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
    outcome.placed++;
    outcome.changed = true;
  }
  return outcome;
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
  const status = jobStatus(allocsOfJob(txn.allocs.values(), job), evalsOfJob(txn.evals.values(), jobId));
  if (status !== job.Status) txn.jobs.put(jobId, { ...job, Status: status, ModifyIndex: txn.index });
}

/** Schedules `jobId` now and records the evaluation (and a blocked one for what did not fit). */
export function evaluate(txn: WriteTxn, deps: SchedulerDeps, jobId: string, trigger: EvalTrigger): Evaluation {
  const job = txn.jobs.get(jobId);
  const evaluation = newEvaluation(txn, job, jobId, trigger);
  const outcome = schedule(txn, deps, jobId, evaluation.ID);

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

/** Tries every blocked evaluation again, highest priority first; those that now place everything complete. */
export function retryBlocked(txn: WriteTxn, deps: SchedulerDeps): void {
  const blocked = txn.evals
    .filter((evaluation) => evaluation.Status === "blocked")
    .sort((a, b) => b.Priority - a.Priority || a.CreateIndex - b.CreateIndex);
  for (const evaluation of blocked) {
    const outcome = schedule(txn, deps, evaluation.JobID, evaluation.ID);
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
