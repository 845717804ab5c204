/**
 * Dispatching a parameterized job (Nomad's Job.Dispatch): the request's
 * payload and meta are checked against the job's `parameterized` block,
 * then a child `<id>/dispatch-<unix>-<8 hex>` is registered with the meta
 * merged into its own and the payload kept for its tasks'
 * `dispatch_payload` (base64, as the API carries it).
 */
import { randomUUID } from "node:crypto";
import * as v from "valibot";
import type { Job } from "../../structs/job.ts";
import { DISPATCH_LAUNCH_SUFFIX } from "../../structs/periodic.ts";
import { invalid } from "../errors.ts";
import type { SchedulerDeps } from "../scheduler/evaluate.ts";
import type { WriteTxn } from "../state/store.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import { launchChild } from "./derive.ts";

/** Nomad's DispatchPayloadSizeLimit: a payload is kept in the job, so it stays small. */
export const DISPATCH_PAYLOAD_MAX_BYTES = 16 * 1024;

/** POST /v1/job/:id/dispatch (Nomad's JobDispatchRequest). */
export const JobDispatchRequestSchema = v.object({
  /** base64, as Go's JSON carries []byte. */
  Payload: v.optional(v.nullable(v.pipe(v.string(), v.base64("must be base64"))), null),
  Meta: v.optional(v.nullable(v.record(v.string(), v.string())), null),
});
export type JobDispatchRequest = v.InferOutput<typeof JobDispatchRequestSchema>;

export interface JobDispatchResponse {
  DispatchedJobID: string;
  EvalID: string;
  EvalCreateIndex: number;
  JobCreateIndex: number;
  Index: number;
}

/** Nomad's validateDispatchRequest. */
function dispatchProblem(job: Job, request: JobDispatchRequest): string | undefined {
  const config = job.ParameterizedJob!;
  const size = request.Payload ? Buffer.from(request.Payload, "base64").length : 0;
  if (config.Payload === "required" && size === 0) return "Payload is not provided but required by parameterized job";
  if (config.Payload === "forbidden" && size > 0) return "Payload provided but forbidden by parameterized job";
  if (size > DISPATCH_PAYLOAD_MAX_BYTES) return `Payload exceeds maximum size; ${size} > ${DISPATCH_PAYLOAD_MAX_BYTES}`;
  const keys = Object.keys(request.Meta ?? {});
  const allowed = new Set([...config.MetaRequired, ...config.MetaOptional]);
  const unpermitted = keys.filter((key) => !allowed.has(key)).sort();
  if (unpermitted.length > 0) return `Dispatch request included unpermitted metadata keys: [${unpermitted.join(" ")}]`;
  const missing = config.MetaRequired.filter((key) => !keys.includes(key)).sort();
  if (missing.length > 0) return `Dispatch did not provide required meta keys: [${missing.join(" ")}]`;
  return undefined;
}

export function dispatch(txn: WriteTxn, deps: SchedulerDeps, job: Job, request: JobDispatchRequest): { child: Job; evaluation: Evaluation } {
  if (!job.ParameterizedJob || job.Dispatched) throw invalid(`Specified job "${job.ID}" is not a parameterized job`);
  if (job.Stop) throw invalid(`Specified job "${job.ID}" is stopped`);
  const problem = dispatchProblem(job, request);
  if (problem) throw invalid(problem);
  const id = `${job.ID}${DISPATCH_LAUNCH_SUFFIX}${Math.floor(txn.now / 1e9)}-${randomUUID().slice(0, 8)}`;
  const { job: child, evaluation } = launchChild(
    txn,
    deps,
    job,
    { ID: id, Dispatched: true, Meta: { ...job.Meta, ...(request.Meta ?? {}) }, Payload: request.Payload && request.Payload !== "" ? request.Payload : null },
    "job-register",
  );
  return { child, evaluation };
}
