/**
 * Scaling a group (Nomad's Job.Scale): a count must stay within the group's
 * `scaling { min max }`, and every request is kept as an event, newest
 * first, MAX_SCALING_EVENTS per group.
 */
import type { ScalingRequest } from "../structs/api.ts";
import type { Job, TaskGroup } from "../structs/job.ts";
import { MAX_SCALING_EVENTS, type ScalingEvent } from "../structs/scaling.ts";
import type { WriteTxn } from "./state/store.ts";

/** Why `count` is outside the group's scaling bounds, or undefined. */
export function scalingBoundsProblem(group: TaskGroup, count: number | null): string | undefined {
  const policy = group.Scaling;
  if (count === null || !policy) return undefined;
  if (count < policy.Min) return `group count was less than scaling policy minimum: ${count} < ${policy.Min}`;
  if (count > policy.Max) return `group count was greater than scaling policy maximum: ${count} > ${policy.Max}`;
  return undefined;
}

export function recordScalingEvent(txn: WriteTxn, job: Job, group: TaskGroup, request: ScalingRequest, evalId: string | null): void {
  const existing = txn.scalingEvents.get(job.ID);
  const event: ScalingEvent = {
    Time: txn.now,
    Count: request.Count,
    PreviousCount: group.Count,
    Message: request.Message,
    Error: request.Error,
    Meta: request.Meta,
    EvalID: evalId,
    CreateIndex: txn.index,
  };
  const events = { ...(existing?.ScalingEvents ?? {}) };
  events[group.Name] = [event, ...(events[group.Name] ?? [])].slice(0, MAX_SCALING_EVENTS);
  txn.scalingEvents.put(job.ID, { Namespace: job.Namespace, JobID: job.ID, ScalingEvents: events, ModifyIndex: txn.index });
}
