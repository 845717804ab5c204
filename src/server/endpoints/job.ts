/**
 * Jobs (Nomad's Job endpoint): register a version, stop or purge, and the
 * reads of a job and what belongs to it.
 *
 *   register ──> check (jobspec/api-job.ts) ──> region, free space ──> one write:
 *                  spec changed? new version (Version+1, JobModifyIndex = index)
 *                  ──> evaluate (reconcile, place) ──> {EvalID, JobModifyIndex, Index}
 *   deregister ──> one write: Stop version, or purge the row ──> evaluate (stops its allocs)
 */
import { jobFromApi } from "../../jobspec/api-job.ts";
import type { JobDeregisterResponse, JobRegisterResponse } from "../../structs/api.ts";
import { allocListStub, type AllocListStub } from "../../structs/alloc.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import { DEFAULT_NAMESPACE, SCHEDULED_JOB_TYPES, SERVER_SET_JOB_FIELDS, type Job, type JobListStub, type JobSummary } from "../../structs/job.ts";
import { ServerError, invalid, notFound } from "../errors.ts";
import { surplusVersions } from "../gc.ts";
import { evaluate } from "../scheduler/evaluate.ts";
import type { WriteTxn } from "../state/store.ts";
import { allocsOfJob, evalsOfJob, jobListStub, jobSummary } from "../status.ts";
import { byPrefix, type EndpointContext } from "./context.ts";

export interface RegisterOptions {
  /** Register only if the job's JobModifyIndex is `jobModifyIndex` (0: only if it does not exist). */
  enforceIndex?: boolean;
  jobModifyIndex?: number;
}

/** A job's fields that define what runs (not the server's bookkeeping). */
function specOf(job: Job): string {
  const copy: Partial<Job> = { ...job };
  for (const field of SERVER_SET_JOB_FIELDS) delete copy[field];
  return JSON.stringify(copy);
}

function storeVersion(txn: WriteTxn, submitted: Job, existing: Job | undefined): Job {
  const job: Job = {
    ...submitted,
    Status: existing?.Status ?? "pending",
    StatusDescription: "",
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

/**
 * What the embedded server cannot schedule, said on register rather than
 * run wrongly: other job types and namespaces, and jobs that Nomad launches
 * as children (periodic, parameterized) rather than places. Every other
 * block is kept and left to placement and the client.
 */
function schedulingProblem(job: Job): string | undefined {
  if (!(SCHEDULED_JOB_TYPES as readonly string[]).includes(job.Type)) return `type "${job.Type}" is not scheduled by drover's server (use ${SCHEDULED_JOB_TYPES.join(" or ")})`;
  if (job.Namespace !== DEFAULT_NAMESPACE) return `namespace "${job.Namespace}" does not exist (drover has only "${DEFAULT_NAMESPACE}")`;
  if (job.Periodic) return 'the "periodic" block is not scheduled by drover\'s server yet';
  if (job.ParameterizedJob) return 'the "parameterized" block is not scheduled by drover\'s server yet';
  return undefined;
}

export class JobEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** POST /v1/jobs: checks `raw` (API JSON), stores a new version when it changed, and schedules it. */
  register(raw: unknown, options: RegisterOptions = {}): JobRegisterResponse {
    const submitted = jobFromApi(raw, { source: "job", style: "json" });
    if (submitted.Region !== this.ctx.region) {
      throw invalid(`job region "${submitted.Region}" is not this agent's region "${this.ctx.region}"`);
    }
    const refused = schedulingProblem(submitted);
    if (refused) throw invalid(`job "${submitted.ID}": ${refused}`);
    this.ctx.requireFreeSpace("register the job");
    return this.ctx.store.write((txn) => {
      const existing = txn.jobs.get(submitted.ID);
      if (options.enforceIndex && (existing?.JobModifyIndex ?? 0) !== (options.jobModifyIndex ?? 0)) {
        throw new ServerError(
          "conflict",
          existing
            ? `enforcing job modify index ${options.jobModifyIndex ?? 0}: job exists with conflicting job modify index ${existing.JobModifyIndex}`
            : `enforcing job modify index ${options.jobModifyIndex}: job does not exist`,
        );
      }
      const job = existing && specOf(existing) === specOf(submitted) ? existing : storeVersion(txn, submitted, existing);
      const evaluation = evaluate(txn, this.ctx.scheduler, submitted.ID, "job-register");
      return { EvalID: evaluation.ID, EvalCreateIndex: txn.index, JobModifyIndex: job.JobModifyIndex, Warnings: "", Index: txn.index };
    });
  }

  /** DELETE /v1/job/:id: stops the job (a new version with Stop), or with `purge` removes it. */
  deregister(id: string, purge: boolean): JobDeregisterResponse {
    return this.ctx.store.write((txn) => {
      const job = txn.jobs.get(id);
      if (!job) throw notFound(`job "${id}"`);
      let jobModifyIndex = job.JobModifyIndex;
      if (purge) txn.jobs.delete(id);
      else if (!job.Stop) jobModifyIndex = storeVersion(txn, { ...job, Stop: true }, job).JobModifyIndex;
      const evaluation = evaluate(txn, this.ctx.scheduler, id, "job-deregister");
      return { EvalID: evaluation.ID, EvalCreateIndex: txn.index, JobModifyIndex: jobModifyIndex, Index: txn.index };
    });
  }

  list(prefix?: string): JobListStub[] {
    return byPrefix(this.ctx.store.read.jobs.values(), prefix).map((job) => jobListStub(job, this.summaryOf(job)));
  }

  get(id: string): Job {
    const job = this.ctx.store.read.jobs.get(id);
    if (!job) throw notFound(`job "${id}"`);
    return job;
  }

  /** Kept versions of the job, newest first. */
  versions(id: string): Job[] {
    const job = this.get(id);
    return [...this.ctx.store.read.versions.values()]
      .filter((version) => version.ID === id && version.CreateIndex === job.CreateIndex)
      .sort((a, b) => b.Version - a.Version);
  }

  allocations(id: string): AllocListStub[] {
    return allocsOfJob(this.ctx.store.read.allocs.values(), this.get(id))
      .sort((a, b) => b.CreateIndex - a.CreateIndex)
      .map(allocListStub);
  }

  evaluations(id: string): Evaluation[] {
    this.get(id);
    return evalsOfJob(this.ctx.store.read.evals.values(), id).sort((a, b) => b.CreateIndex - a.CreateIndex);
  }

  summary(id: string): JobSummary {
    return this.summaryOf(this.get(id));
  }

  private summaryOf(job: Job): JobSummary {
    const { read } = this.ctx.store;
    return jobSummary(job, allocsOfJob(read.allocs.values(), job), evalsOfJob(read.evals.values(), job.ID));
  }
}
