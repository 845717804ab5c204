/**
 * Deployments (Nomad's Deployment): how a service job's groups move from
 * one version to the next under their `update` block. The server creates
 * one when a version changes what runs (or a job first runs); the client
 * reports each alloc's health; the server counts it here and decides.
 *
 *   running ──(every group: enough healthy, canaries promoted)──> successful (job version Stable)
 *      │ ├──(an alloc unhealthy | progress deadline | `deployment fail`)──> failed ──> auto_revert?
 *      │ └──(newer job version | job stopped)──> cancelled
 *      └──(`deployment pause`)──> paused ──(resume)──> running
 */
import * as v from "valibot";
import { Duration } from "./job.ts";
import { NonNegativeInt } from "./common.ts";

export const DEPLOYMENT_STATUSES = ["running", "paused", "failed", "successful", "cancelled", "pending", "blocked", "unblocking"] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** Nomad's DeploymentStatusDescription* texts, which `nomad deployment status` prints. */
export const DEPLOYMENT_DESCRIPTION = {
  running: "Deployment is running",
  needsPromotion: "Deployment is running but requires manual promotion",
  autoPromotion: "Deployment is running pending automatic promotion",
  paused: "Deployment is paused",
  successful: "Deployment completed successfully",
  stoppedJob: "Cancelled because job is stopped",
  newerJob: "Cancelled due to newer version of job",
  failedAllocations: "Failed due to unhealthy allocations",
  progressDeadline: "Failed due to progress deadline",
  failedByUser: "Deployment marked as failed",
} as const;

/** Nomad's DeploymentState: one group's progress in a deployment. */
export const DeploymentStateSchema = v.strictObject({
  AutoRevert: v.boolean(),
  AutoPromote: v.boolean(),
  ProgressDeadline: Duration,
  /** RFC 3339; Go's zero time until the first placement starts the clock. */
  RequireProgressBy: v.string(),
  Promoted: v.boolean(),
  PlacedCanaries: v.array(v.string()),
  DesiredCanaries: NonNegativeInt,
  DesiredTotal: NonNegativeInt,
  PlacedAllocs: NonNegativeInt,
  HealthyAllocs: NonNegativeInt,
  UnhealthyAllocs: NonNegativeInt,
});
export type DeploymentState = v.InferOutput<typeof DeploymentStateSchema>;

export const DeploymentSchema = v.strictObject({
  ID: v.string(),
  Namespace: v.string(),
  JobID: v.string(),
  JobVersion: NonNegativeInt,
  JobModifyIndex: NonNegativeInt,
  JobSpecModifyIndex: NonNegativeInt,
  JobCreateIndex: NonNegativeInt,
  IsMultiregion: v.boolean(),
  TaskGroups: v.record(v.string(), DeploymentStateSchema),
  Status: v.picklist(DEPLOYMENT_STATUSES),
  StatusDescription: v.string(),
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
});
export type Deployment = v.InferOutput<typeof DeploymentSchema>;

/** Nomad's Deployment.Active: not yet finished. */
export function isDeploymentActive(deployment: Pick<Deployment, "Status">): boolean {
  return ["running", "paused", "blocked", "unblocking", "pending"].includes(deployment.Status);
}

/** Nomad's RequiresPromotion: running, with a group whose canaries wait for promotion. */
export function requiresPromotion(deployment: Deployment): boolean {
  return deployment.Status === "running" && Object.values(deployment.TaskGroups).some((state) => state.DesiredCanaries > 0 && !state.Promoted);
}

/** Nomad's HasAutoPromote: every group promotes on its own. */
export function hasAutoPromote(deployment: Deployment): boolean {
  const groups = Object.values(deployment.TaskGroups);
  return deployment.Status === "running" && groups.length > 0 && groups.every((state) => state.AutoPromote);
}

/** The description of a running deployment: whether it waits for promotion, and whose. */
export function runningDescription(deployment: Deployment): string {
  if (!requiresPromotion(deployment)) return DEPLOYMENT_DESCRIPTION.running;
  return hasAutoPromote(deployment) ? DEPLOYMENT_DESCRIPTION.autoPromotion : DEPLOYMENT_DESCRIPTION.needsPromotion;
}

/** PUT /v1/deployment/{promote,fail,pause,allocation-health}/:id (Nomad's DeploymentUpdateResponse). */
export interface DeploymentUpdateResponse {
  EvalID: string;
  EvalCreateIndex: number;
  DeploymentModifyIndex: number;
  RevertedJobVersion: number | null;
  Index: number;
}

export const DeploymentPromoteRequestSchema = v.object({
  All: v.optional(v.boolean(), false),
  Groups: v.optional(v.nullable(v.array(v.string())), null),
});
export const DeploymentPauseRequestSchema = v.object({ Pause: v.optional(v.boolean(), false) });
export const DeploymentAllocHealthRequestSchema = v.object({
  HealthyAllocationIDs: v.optional(v.nullable(v.array(v.string())), null),
  UnhealthyAllocationIDs: v.optional(v.nullable(v.array(v.string())), null),
});
