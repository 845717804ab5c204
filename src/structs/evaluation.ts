/**
 * Evaluations (Nomad's Evaluation): the record of one scheduling decision.
 * drover's server evaluates in the same transaction as the write that
 * triggered it, so an evaluation is born complete; what could not be placed
 * waits in a `blocked` evaluation until room frees up.
 *
 *   register/stop ──> eval "complete" (FailedTGAllocs when some did not fit)
 *                         ├─> eval "blocked" ──(room frees)──> "complete"
 *                         │         └──(job changed or purged)──> "canceled"
 *                         └─> eval "pending" with WaitUntil (a failed alloc's reschedule delay)
 *                                   ──(the time comes)──> "complete", the replacement placed
 */
import * as v from "valibot";
import { NonNegativeInt, UnixNanos } from "./common.ts";
import { AllocMetricSchema } from "./alloc.ts";

export const EVAL_STATUSES = ["pending", "complete", "failed", "blocked", "canceled"] as const;
export type EvalStatus = (typeof EVAL_STATUSES)[number];

export const EVAL_TRIGGERS = [
  "job-register",
  "job-deregister",
  "alloc-stop",
  "queued-allocs",
  "node-update",
  "node-drain",
  "job-scaling",
  "periodic-job",
  "deployment-watcher",
  "alloc-failure",
] as const;
export type EvalTrigger = (typeof EVAL_TRIGGERS)[number];

export const EvaluationSchema = v.strictObject({
  ID: v.string(),
  Namespace: v.string(),
  Priority: NonNegativeInt,
  Type: v.string(),
  TriggeredBy: v.picklist(EVAL_TRIGGERS),
  JobID: v.string(),
  JobModifyIndex: NonNegativeInt,
  NodeID: v.string(),
  Status: v.picklist(EVAL_STATUSES),
  StatusDescription: v.string(),
  /** Per group: why its allocations could not all be placed. */
  FailedTGAllocs: v.nullable(v.record(v.string(), AllocMetricSchema)),
  /** Per group: allocations still waiting for room. */
  QueuedAllocations: v.record(v.string(), NonNegativeInt),
  BlockedEval: v.string(),
  PreviousEval: v.string(),
  /** The deployment this evaluation moved along, if any. */
  DeploymentID: v.optional(v.string(), ""),
  /** A follow-up evaluation (a failed alloc's reschedule delay) runs at this time, RFC 3339; Go's zero time otherwise. */
  WaitUntil: v.optional(v.string(), "0001-01-01T00:00:00Z"),
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
  CreateTime: UnixNanos,
  ModifyTime: UnixNanos,
});
export type Evaluation = v.InferOutput<typeof EvaluationSchema>;
