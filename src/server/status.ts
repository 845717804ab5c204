/**
 * What a job's allocations and evaluations add up to: its Status (Nomad's
 * getJobStatus), its summary per group, and the list stubs the API serves.
 * Pure functions over the rows they are given.
 */
import { isAllocTerminal, type Allocation } from "../structs/alloc.ts";
import type { Evaluation } from "../structs/evaluation.ts";
import type { Job, JobListStub, JobStatus, JobSummary, TaskGroupSummary } from "../structs/job.ts";

const TERMINAL_EVAL = new Set(["complete", "failed", "canceled"]);

/** The allocs of this incarnation of the job (not those of an earlier job purged under the same ID). */
export function allocsOfJob(allocs: Iterable<Allocation>, job: Pick<Job, "ID" | "CreateIndex">): Allocation[] {
  const out: Allocation[] = [];
  for (const alloc of allocs) if (alloc.JobID === job.ID && alloc.Job.CreateIndex === job.CreateIndex) out.push(alloc);
  return out;
}

export function evalsOfJob(evals: Iterable<Evaluation>, jobId: string): Evaluation[] {
  const out: Evaluation[] = [];
  for (const evaluation of evals) if (evaluation.JobID === jobId) out.push(evaluation);
  return out;
}

/**
 * running: some alloc is not terminal; pending: nothing runs but an
 * evaluation waits (placement blocked), or nothing happened yet; dead:
 * everything finished or was stopped.
 */
export function jobStatus(allocs: readonly Allocation[], evals: readonly Evaluation[]): JobStatus {
  if (allocs.some((alloc) => !isAllocTerminal(alloc))) return "running";
  if (evals.some((evaluation) => !TERMINAL_EVAL.has(evaluation.Status))) return "pending";
  return allocs.length > 0 || evals.length > 0 ? "dead" : "pending";
}

function emptyGroupSummary(): TaskGroupSummary {
  return { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
}

/** Children of a periodic or parameterized job by their status (JobSummary.Children). */
export function childrenSummary(jobs: Iterable<Pick<Job, "ParentID" | "Status">>, parentId: string): JobSummary["Children"] {
  const children = { Pending: 0, Running: 0, Dead: 0 };
  for (const job of jobs) {
    if (job.ParentID !== parentId) continue;
    if (job.Status === "pending") children.Pending++;
    else if (job.Status === "running") children.Running++;
    else children.Dead++;
  }
  return children;
}

export function jobSummary(job: Job, allocs: readonly Allocation[], evals: readonly Evaluation[], children: JobSummary["Children"] = { Pending: 0, Running: 0, Dead: 0 }): JobSummary {
  const summary: Record<string, TaskGroupSummary> = {};
  for (const group of job.TaskGroups) summary[group.Name] = emptyGroupSummary();
  for (const alloc of allocs) {
    const counts = (summary[alloc.TaskGroup] ??= emptyGroupSummary());
    switch (alloc.ClientStatus) {
      case "pending":
        counts.Starting++;
        break;
      case "running":
        counts.Running++;
        break;
      case "complete":
        counts.Complete++;
        break;
      case "failed":
        counts.Failed++;
        break;
      case "lost":
        counts.Lost++;
        break;
    }
  }
  const blocked = evals.find((evaluation) => evaluation.Status === "blocked");
  for (const [group, queued] of Object.entries(blocked?.QueuedAllocations ?? {})) {
    if (summary[group]) summary[group].Queued = queued;
  }
  const modifyIndex = Math.max(job.ModifyIndex, ...allocs.map((alloc) => alloc.ModifyIndex));
  return {
    JobID: job.ID,
    Namespace: job.Namespace,
    Summary: summary,
    Children: children,
    CreateIndex: job.CreateIndex,
    ModifyIndex: modifyIndex,
  };
}

export function jobListStub(job: Job, summary: JobSummary): JobListStub {
  return {
    ID: job.ID,
    ParentID: job.ParentID,
    Name: job.Name,
    Namespace: job.Namespace,
    Datacenters: job.Datacenters,
    NodePool: job.NodePool,
    Type: job.Type,
    Priority: job.Priority,
    Periodic: job.Periodic !== null,
    // A dispatched child keeps the block but is not itself parameterized (Nomad's IsParameterized).
    ParameterizedJob: job.ParameterizedJob !== null && !job.Dispatched,
    Stop: job.Stop,
    Status: job.Status,
    StatusDescription: job.StatusDescription,
    Version: job.Version,
    JobSummary: summary,
    CreateIndex: job.CreateIndex,
    ModifyIndex: job.ModifyIndex,
    JobModifyIndex: job.JobModifyIndex,
    SubmitTime: job.SubmitTime,
  };
}
