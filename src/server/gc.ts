/**
 * The server's garbage collection (Nomad's core GC jobs, for one node):
 * removes what no one will ask for again, in one transaction per pass.
 *
 *   alloc of a purged job, finished on the client ──────────> now (also on purge and on
 *                                                              the client's last update)
 *   alloc told to stop and finished, older than eval_gc_threshold
 *     (a batch job's: batch_eval_gc_threshold, and only once its job is
 *      stopped or gone, or it ran an older version) ────────> removed
 *   job dead (stopped or done) with nothing newer than job_gc_threshold ─> job, its allocs, evals, versions
 *   evaluation finished, older than eval_gc_threshold (not a job's last; a
 *     batch job's: batch_eval_gc_threshold, kept while its job is not stopped) ─> removed
 *   job versions no alloc and no job points at ───────────────> removed
 *   deployment finished, older than deployment_gc_threshold, or its job gone ─> removed
 *   node down for longer than node_gc_threshold with no alloc still live ─> removed
 *   a periodic launch or scaling history of a job that is gone ─> removed
 *
 * Ages are measured from the write's clock (txn.now), so tests move time
 * instead of waiting. Defaults and keys are Nomad's (nomad/config.go).
 * A forced pass (PUT /v1/system/gc) ignores the ages. The client learns an
 * alloc was removed from its alloc watch and cleans up its alloc dir.
 */
import { isAllocTerminal, isClientTerminal, type Allocation } from "../structs/alloc.ts";
import { NS_PER_MS } from "../lib/units.ts";
import type { Job } from "../structs/job.ts";
import type { WriteTxn } from "./state/store.ts";
import { allocsOfJob, evalsOfJob } from "./status.ts";
import { isDeploymentActive, type Deployment } from "../structs/deployment.ts";

/** When a deployment last changed: the submit time of the version it deployed (deployments carry no time of their own). */
function deploymentTime(txn: WriteTxn, deployment: Deployment): number {
  return txn.versions.get(deployment.JobSpecModifyIndex)?.SubmitTime ?? 0;
}

const HOUR_MS = 3_600_000;

/** How old (milliseconds) a finished object must be before a pass removes it: the agent config's server { *_gc_threshold }. */
export interface GcThresholds {
  /** job_gc_threshold: how long a dead job stays visible in `job status`. */
  job: number;
  /** eval_gc_threshold: how long a finished evaluation, and a stopped alloc, stay visible. */
  eval: number;
  /** batch_eval_gc_threshold: the same for batch jobs' evaluations and allocs. */
  batchEval: number;
  /** deployment_gc_threshold: how long a finished deployment stays visible. */
  deployment: number;
  /** node_gc_threshold: how long a down node stays listed. */
  node: number;
}

/** Nomad's defaults. */
export const DEFAULT_GC_THRESHOLDS: GcThresholds = { job: 4 * HOUR_MS, eval: HOUR_MS, batchEval: 24 * HOUR_MS, deployment: HOUR_MS, node: 24 * HOUR_MS };

/** Nomad's JobTrackedVersions: versions kept for `job history` beyond those allocs still run. */
export const JOB_TRACKED_VERSIONS = 6;

export interface GcResult {
  jobs: number;
  nodes: number;
  allocs: number;
  evals: number;
  versions: number;
  deployments: number;
}

function jobInstanceAlive(txn: WriteTxn, alloc: Allocation): boolean {
  return txn.jobs.get(alloc.JobID)?.CreateIndex === alloc.Job.CreateIndex;
}

/**
 * An alloc of a purged job that has finished on the client: no one can ask
 * for it again, so it goes at once (on purge, on the client's last update
 * and in every pass), and the client, no longer seeing it, destroys its
 * tasks' leftovers and its alloc dir, as Nomad's client does.
 */
export function isFinishedOrphan(txn: WriteTxn, alloc: Allocation): boolean {
  return isClientTerminal(alloc.ClientStatus) && !jobInstanceAlive(txn, alloc);
}

/** Versions of `job` beyond the newest JOB_TRACKED_VERSIONS that no alloc runs. */
export function surplusVersions(txn: WriteTxn, job: Job): number[] {
  const inUse = new Set<number>([job.JobModifyIndex]);
  for (const alloc of txn.allocs.values()) inUse.add(alloc.Job.JobModifyIndex);
  return txn.versions
    .filter((version) => version.ID === job.ID && version.CreateIndex === job.CreateIndex)
    .sort((a, b) => b.Version - a.Version)
    .slice(JOB_TRACKED_VERSIONS)
    .map((version) => version.JobModifyIndex)
    .filter((key) => !inUse.has(key));
}

/** A batch job's evaluations and allocs stay while the job may still be asked about (Nomad's gcEval): until it is stopped or gone. */
function batchJobKept(txn: WriteTxn, jobId: string): boolean {
  const job = txn.jobs.get(jobId);
  return job !== undefined && !(job.Status === "dead" && job.Stop);
}

export function collectGarbage(txn: WriteTxn, force: boolean, thresholds: GcThresholds = DEFAULT_GC_THRESHOLDS): GcResult {
  const result: GcResult = { jobs: 0, nodes: 0, allocs: 0, evals: 0, versions: 0, deployments: 0 };
  const older = (time: number, thresholdMs: number) => force || txn.now - time > thresholdMs * NS_PER_MS;

  // A finished job's group is only in SQLite: the ones old enough to lose something come back to memory for this pass.
  for (const [jobId, group] of [...txn.coldGroups]) {
    const removable = group.oldestRemovable !== undefined && older(group.oldestRemovable, group.batch ? thresholds.batchEval : thresholds.eval);
    if (removable || older(group.last, thresholds.job)) txn.jobs.get(jobId);
  }

  for (const job of [...txn.jobs.values()]) {
    if (job.Status !== "dead") continue;
    const allocs = allocsOfJob(txn.allocs.values(), job);
    const evals = evalsOfJob(txn.evals.values(), job.ID);
    const last = Math.max(job.SubmitTime, ...allocs.map((alloc) => alloc.ModifyTime), ...evals.map((item) => item.ModifyTime));
    // A stopped job stays listed while its allocs are still shutting down.
    if (!allocs.every((alloc) => isClientTerminal(alloc.ClientStatus)) || !older(last, thresholds.job)) continue;
    txn.jobs.delete(job.ID);
    if (txn.periodicLaunches.get(job.ID)) txn.periodicLaunches.delete(job.ID);
    if (txn.scalingEvents.get(job.ID)) txn.scalingEvents.delete(job.ID);
    result.jobs++;
  }

  for (const alloc of [...txn.allocs.values()]) {
    if (!isClientTerminal(alloc.ClientStatus)) continue;
    const batch = alloc.Job.Type === "batch";
    // A batch alloc of a live job goes only once a newer version replaced it (Nomad's olderVersionTerminalAllocs).
    const keptForJob = batch && batchJobKept(txn, alloc.JobID) && txn.jobs.get(alloc.JobID)?.JobModifyIndex === alloc.Job.JobModifyIndex;
    const threshold = batch ? thresholds.batchEval : thresholds.eval;
    if (isFinishedOrphan(txn, alloc) || (isAllocTerminal(alloc) && alloc.DesiredStatus !== "run" && !keptForJob && older(alloc.ModifyTime, threshold))) {
      txn.allocs.delete(alloc.ID);
      result.allocs++;
    }
  }

  const lastEval = new Map<string, number>();
  for (const evaluation of txn.evals.values()) lastEval.set(evaluation.JobID, Math.max(lastEval.get(evaluation.JobID) ?? 0, evaluation.CreateIndex));
  for (const evaluation of [...txn.evals.values()]) {
    const jobGone = !txn.jobs.get(evaluation.JobID);
    // A waiting evaluation stays while its job does.
    if ((evaluation.Status === "blocked" || evaluation.Status === "pending") && !jobGone) continue;
    const superseded = lastEval.get(evaluation.JobID) !== evaluation.CreateIndex;
    const batch = evaluation.Type === "batch";
    if (batch && batchJobKept(txn, evaluation.JobID)) continue;
    if (jobGone || (superseded && older(evaluation.ModifyTime, batch ? thresholds.batchEval : thresholds.eval))) {
      txn.evals.delete(evaluation.ID);
      result.evals++;
    }
  }

  const latestOfJob = new Map<string, number>();
  for (const deployment of txn.deployments.values()) latestOfJob.set(deployment.JobID, Math.max(latestOfJob.get(deployment.JobID) ?? 0, deployment.CreateIndex));
  for (const deployment of [...txn.deployments.values()]) {
    const job = txn.jobs.get(deployment.JobID);
    const jobGone = job?.CreateIndex !== deployment.JobCreateIndex;
    // A job's latest deployment stays while the job does: `job status` shows it.
    const latest = latestOfJob.get(deployment.JobID) === deployment.CreateIndex;
    if (jobGone || (!latest && !isDeploymentActive(deployment) && older(deploymentTime(txn, deployment), thresholds.deployment))) {
      txn.deployments.delete(deployment.ID);
      result.deployments++;
    }
  }

  for (const node of [...txn.nodes.values()]) {
    if (node.Status !== "down" || !older(node.StatusUpdatedAt * 1000 * NS_PER_MS, thresholds.node)) continue;
    if (txn.allocs.filter((alloc) => alloc.NodeID === node.ID && !isClientTerminal(alloc.ClientStatus)).length > 0) continue;
    txn.nodes.delete(node.ID);
    result.nodes++;
  }

  const referenced = new Set<number>();
  for (const job of txn.jobs.values()) referenced.add(job.JobModifyIndex);
  for (const alloc of txn.allocs.values()) referenced.add(alloc.Job.JobModifyIndex);
  const surplus = new Set([...txn.jobs.values()].flatMap((job) => surplusVersions(txn, job)));
  for (const version of [...txn.versions.values()]) {
    const orphaned = txn.jobs.get(version.ID)?.CreateIndex !== version.CreateIndex && !referenced.has(version.JobModifyIndex);
    if (orphaned || surplus.has(version.JobModifyIndex)) {
      txn.versions.delete(version.JobModifyIndex);
      result.versions++;
    }
  }
  return result;
}
