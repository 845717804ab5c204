/** Marking a job version stable (or not): the version row, and the job itself when it is that version. */
import { versionsOf } from "../job-versions.ts";
import type { WriteTxn } from "../state/store.ts";

/** Sets Stable on the job's version `version`; false when the job or version does not exist. */
export function setVersionStable(txn: WriteTxn, jobId: string, version: number, stable: boolean): boolean {
  const job = txn.jobs.get(jobId);
  if (!job) return false;
  const row = versionsOf(txn.versions.values(), job).find((candidate) => candidate.Version === version);
  if (!row) return false;
  if (row.Stable !== stable) txn.versions.put(row.JobModifyIndex, { ...row, Stable: stable });
  if (job.Version === version && job.Stable !== stable) txn.jobs.put(jobId, { ...job, Stable: stable, ModifyIndex: txn.index });
  return true;
}
