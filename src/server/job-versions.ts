/**
 * Job versions: what counts as a change of a job's spec, and storing a new
 * version. Registering, reverting (by the operator or a failed deployment's
 * auto_revert) and scaling all store versions this one way.
 */
import { SERVER_SET_JOB_FIELDS, type Job } from "../structs/job.ts";
import { surplusVersions } from "./gc.ts";
import type { WriteTxn } from "./state/store.ts";

/** A job's fields that define what runs (not the server's bookkeeping). */
export function specOf(job: Job): string {
  const copy: Partial<Job> = { ...job };
  for (const field of SERVER_SET_JOB_FIELDS) delete copy[field];
  return JSON.stringify(copy);
}

/** Stores `submitted` as the job's next version (version 0 for a new job) and makes it current. */
export function storeVersion(txn: WriteTxn, submitted: Job, existing: Job | undefined): Job {
  const job: Job = {
    ...submitted,
    Status: existing?.Status ?? "pending",
    StatusDescription: "",
    // A new version is not known to be good until a deployment says so.
    Stable: false,
    Version: existing ? existing.Version + 1 : 0,
    SubmitTime: txn.now,
    CreateIndex: existing?.CreateIndex ?? txn.index,
    ModifyIndex: txn.index,
    JobModifyIndex: txn.index,
  };
  txn.jobs.put(job.ID, job);
  txn.versions.put(job.JobModifyIndex, job);
  for (const key of surplusVersions(txn, job)) txn.versions.delete(key);
  return job;
}

/** The job's kept versions, newest first. */
export function versionsOf(versions: Iterable<Job>, job: Pick<Job, "ID" | "CreateIndex">): Job[] {
  const out: Job[] = [];
  for (const version of versions) if (version.ID === job.ID && version.CreateIndex === job.CreateIndex) out.push(version);
  return out.sort((a, b) => b.Version - a.Version);
}
