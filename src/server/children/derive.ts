/**
 * Child jobs: what a periodic job launches at each time and what a
 * parameterized job's dispatch creates. A child is a copy of its parent
 * under a derived ID (`<parent>/periodic-<unix>`, `<parent>/dispatch-<unix>-<8 hex>`)
 * with ParentID set and the launching block removed, registered and
 * scheduled like any job. Parents are never placed themselves.
 */
import type { Job } from "../../structs/job.ts";
import { storeVersion } from "../job-versions.ts";
import { evaluate, type SchedulerDeps } from "../scheduler/evaluate.ts";
import type { WriteTxn } from "../state/store.ts";
import type { Evaluation, EvalTrigger } from "../../structs/evaluation.ts";

/** Registers `child` (derived from its parent) as a new job and schedules it. */
export function launchChild(txn: WriteTxn, deps: SchedulerDeps, parent: Job, child: Partial<Job> & Pick<Job, "ID">, trigger: EvalTrigger): { job: Job; evaluation: Evaluation } {
  const derived: Job = { ...parent, ...child, Name: child.ID, ParentID: parent.ID, Periodic: null, Stop: false };
  const job = storeVersion(txn, derived, txn.jobs.get(child.ID));
  return { job, evaluation: evaluate(txn, deps, job.ID, trigger) };
}

/** Whether any child of `parent` is not dead yet: Nomad's prohibit_overlap test. */
export function hasRunningChild(txn: WriteTxn, parent: Job): boolean {
  for (const job of txn.jobs.values()) if (job.ParentID === parent.ID && job.Status !== "dead") return true;
  return false;
}
