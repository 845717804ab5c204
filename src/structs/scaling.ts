/**
 * A job's scaling history (Nomad's JobScalingEvents): per group, the last
 * events of `nomad job scale` and POST /v1/job/:id/scale, newest first, as
 * GET /v1/job/:id/scale lists them.
 */
import * as v from "valibot";
import { NonNegativeInt, UnixNanos } from "./common.ts";

/** Nomad's JobTrackedScalingEvents: events kept per group. */
export const MAX_SCALING_EVENTS = 20;

export const ScalingEventSchema = v.strictObject({
  Time: UnixNanos,
  /** The count asked for; null for an event that only records something (no scaling). */
  Count: v.nullable(NonNegativeInt),
  PreviousCount: NonNegativeInt,
  Message: v.string(),
  Error: v.boolean(),
  Meta: v.nullable(v.record(v.string(), v.unknown())),
  /** The evaluation a count change created. */
  EvalID: v.nullable(v.string()),
  CreateIndex: NonNegativeInt,
});
export type ScalingEvent = v.InferOutput<typeof ScalingEventSchema>;

export const JobScalingEventsSchema = v.strictObject({
  Namespace: v.string(),
  JobID: v.string(),
  ScalingEvents: v.record(v.string(), v.array(ScalingEventSchema)),
  ModifyIndex: NonNegativeInt,
});
export type JobScalingEvents = v.InferOutput<typeof JobScalingEventsSchema>;
