/**
 * A periodic job's last launch (Nomad's PeriodicLaunch): kept so a restarted
 * agent neither launches twice for one time nor forgets one that came while
 * it was down.
 */
import * as v from "valibot";
import { NonNegativeInt, UnixNanos } from "./common.ts";

export const PeriodicLaunchSchema = v.strictObject({
  ID: v.string(),
  Namespace: v.string(),
  /** The time the last child was launched for, nanoseconds since the epoch. */
  Launch: UnixNanos,
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
});
export type PeriodicLaunch = v.InferOutput<typeof PeriodicLaunchSchema>;

/** Nomad's names for the children of a periodic and a parameterized job. */
export const PERIODIC_LAUNCH_SUFFIX = "/periodic-";
export const DISPATCH_LAUNCH_SUFFIX = "/dispatch-";

/** POST /v1/job/:id/periodic/force (Nomad's PeriodicForceResponse). */
export interface PeriodicForceResponse {
  EvalID: string;
  EvalCreateIndex: number;
  Index: number;
}
