/**
 * Periodic jobs (Nomad's periodic dispatcher): at each time the cron spec
 * names, in the job's time zone, a child job `<id>/periodic-<unix>` is
 * launched. The last launch is stored (periodic_launches), so a restarted
 * agent launches what fell due while it was down once, not once per missed
 * time, and never twice for one time.
 *
 *   register ──> launch row = now ──> due at next(spec, last launch)
 *   due ──> prohibit_overlap and a child not dead? ──yes──> skipped (logged as the launch)
 *             │ no
 *             ▼
 *           child registered and scheduled; launch row = that time
 *   force (POST /v1/job/:id/periodic/force) ──> a child now, whatever the spec says
 */
import { nextCronTime } from "../../lib/cron.ts";
import { NS_PER_MS, NS_PER_SECOND } from "../../lib/units.ts";
import { periodicSpecs, type Job } from "../../structs/job.ts";
import { PERIODIC_LAUNCH_SUFFIX, type PeriodicLaunch } from "../../structs/periodic.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import type { SchedulerDeps } from "../scheduler/evaluate.ts";
import type { WriteTxn } from "../state/store.ts";
import { hasRunningChild, launchChild } from "./derive.ts";

/**
 * A launch found due more than this late was missed (the agent was down);
 * it launches now, under the present time. Within it, the launch is named
 * after its scheduled time, as Nomad names on-time launches.
 */
const MISSED_LAUNCH_NS = 60_000 * NS_PER_MS;

/** A periodic job that launches: enabled, not stopped. */
export function isPeriodicActive(job: Job): boolean {
  return job.Periodic !== null && job.Periodic.Enabled && !job.Stop;
}

/** When the job next launches (ms since the epoch), or undefined. */
export function nextLaunchMs(job: Job, launch: PeriodicLaunch | undefined): number | undefined {
  if (!isPeriodicActive(job)) return undefined;
  const after = launch ? launch.Launch / NS_PER_MS : job.SubmitTime / NS_PER_MS;
  // Nomad 1.6's `crons`: the next launch is the earliest any of them names.
  const times = periodicSpecs(job.Periodic!)
    .map((spec) => nextCronTime(spec, job.Periodic!.TimeZone, after))
    .filter((time): time is number => time !== undefined);
  return times.length === 0 ? undefined : Math.min(...times);
}

function recordLaunch(txn: WriteTxn, job: Job, atNs: number): void {
  const existing = txn.periodicLaunches.get(job.ID);
  txn.periodicLaunches.put(job.ID, { ID: job.ID, Namespace: job.Namespace, Launch: atNs, CreateIndex: existing?.CreateIndex ?? txn.index, ModifyIndex: txn.index });
}

/** After a periodic job is registered: its launch row starts the clock (kept when it already exists). */
export function trackPeriodic(txn: WriteTxn, job: Job): void {
  if (isPeriodicActive(job) && !txn.periodicLaunches.get(job.ID)) recordLaunch(txn, job, txn.now);
  if (!job.Periodic && txn.periodicLaunches.get(job.ID)) txn.periodicLaunches.delete(job.ID);
}

function launchAt(txn: WriteTxn, deps: SchedulerDeps, job: Job, atNs: number): Evaluation {
  const { evaluation } = launchChild(txn, deps, job, { ID: `${job.ID}${PERIODIC_LAUNCH_SUFFIX}${Math.floor(atNs / NS_PER_SECOND)}` }, "periodic-job");
  recordLaunch(txn, job, atNs);
  return evaluation;
}

/** Launches the job's child if its time has come (a time missed while the agent was down launches now, once). */
export function launchDue(txn: WriteTxn, deps: SchedulerDeps, jobId: string): void {
  const job = txn.jobs.get(jobId);
  if (!job) return;
  const due = nextLaunchMs(job, txn.periodicLaunches.get(jobId));
  if (due === undefined || due * NS_PER_MS > txn.now) return;
  // A missed time launches now; an on-time one is named after its own time.
  const atNs = txn.now - due * NS_PER_MS > MISSED_LAUNCH_NS ? txn.now : due * NS_PER_MS;
  if (job.Periodic!.ProhibitOverlap && hasRunningChild(txn, job)) {
    recordLaunch(txn, job, atNs);
    return;
  }
  launchAt(txn, deps, job, atNs);
}

/** POST /v1/job/:id/periodic/force: a child now. */
export function forceLaunch(txn: WriteTxn, deps: SchedulerDeps, job: Job): Evaluation {
  return launchAt(txn, deps, job, txn.now);
}
