/**
 * Draining a node (Nomad's drainer, for the one node drover schedules on):
 * its allocs are told to stop with DesiredTransition.Migrate, a few at a
 * time, and their replacements wait in a blocked evaluation until some node
 * is eligible again.
 *
 *   drain set ──> node ineligible, DrainStrategy, event "Node drain strategy set"
 *        │
 *        ▼  advanceDrains(): when the drain is set, whenever the client reports, at the deadline
 *   deadline reached (or Deadline < 0, forced)? ──yes──> every alloc left migrates
 *        │ no
 *        ▼
 *   service groups: migrate up to migrate.max_parallel allocs at once, each
 *   once it is healthy by the group's migrate block (health_check,
 *   min_healthy_time; the client decides) or decided unhealthy; the next
 *   batch once those have stopped. Batch allocs wait for the deadline.
 *        │
 *        ▼  nothing but system allocs left
 *   system allocs stop (all at once), unless the drain ignores system jobs
 *        │
 *        ▼  no alloc of the node left pending or running (but ignored system ones)
 *   DrainStrategy unset, event "Node drain complete" (node stays ineligible)
 *
 * Nomad waits for a migrated alloc's replacement to be healthy before it
 * moves the next batch; a single node has nowhere to put that replacement,
 * so drover honours the migrate block as far as one node allows: it never
 * moves an alloc whose health is still being judged (one that just started
 * or restarted), and moves on once the batch has stopped.
 */
import { groupBy } from "../../lib/group-by.ts";
import { allocTaskGroup, isClientTerminal, type Allocation } from "../../structs/alloc.ts";
import type { TaskGroup } from "../../structs/job.ts";
import type { Node } from "../../structs/node.ts";
import { evaluate, type SchedulerDeps } from "../scheduler/evaluate.ts";
import type { WriteTxn } from "../state/store.ts";
import { withNodeEvent } from "./node-events.ts";

/** Nomad's default migrate.max_parallel: one alloc of a group moves at a time. */
export const DEFAULT_MIGRATE_MAX_PARALLEL = 1;

/** Nomad's DesiredDescription for an alloc a drain moves. */
export const MIGRATING = "alloc is being migrated";

export const DRAIN_COMPLETE = "Node drain complete";

/** The group's migrate.max_parallel (Nomad's default 1 without a migrate block); 0 would never move anything, so at least 1. */
function maxParallel(group: TaskGroup | undefined): number {
  return Math.max(1, group?.Migrate?.MaxParallel ?? DEFAULT_MIGRATE_MAX_PARALLEL);
}

/** The drain's deadline in nanoseconds since the epoch, or undefined when it has none. */
export function forceDeadlineNanos(node: Node): number | undefined {
  const deadline = node.DrainStrategy?.ForceDeadline;
  return deadline ? Date.parse(deadline) * 1e6 : undefined;
}

const isLive = (alloc: Allocation) => !isClientTerminal(alloc.ClientStatus);
const isMigrating = (alloc: Allocation) => alloc.DesiredTransition.Migrate === true;
const isSystemAlloc = (alloc: Allocation) => alloc.Job.Type === "system";
/** Its health is decided: healthy (it may go, a batch at a time) or unhealthy (it serves nothing to wait for). */
const isJudged = (alloc: Allocation) => alloc.DeploymentStatus?.Healthy === true || alloc.DeploymentStatus?.Healthy === false;

/** Moves every draining node's drain along; see the diagram above. */
export function advanceDrains(txn: WriteTxn, deps: SchedulerDeps): void {
  for (const node of txn.nodes.filter((candidate) => candidate.DrainStrategy !== null)) advanceDrain(txn, deps, node);
}

function advanceDrain(txn: WriteTxn, deps: SchedulerDeps, node: Node): void {
  const strategy = node.DrainStrategy!;
  const deadline = forceDeadlineNanos(node);
  const forced = strategy.Deadline < 0 || (deadline !== undefined && txn.now >= deadline);
  const onNode = txn.allocs.filter((alloc) => alloc.NodeID === node.ID && isLive(alloc));
  // System allocs stay while anything else runs (what they serve may still be leaving), and with IgnoreSystemJobs for good.
  const system = strategy.IgnoreSystemJobs ? [] : onNode.filter(isSystemAlloc);
  const others = onNode.filter((alloc) => !isSystemAlloc(alloc));
  const live = [...others, ...system];

  const toMigrate: Allocation[] = [];
  if (forced) {
    toMigrate.push(...live.filter((alloc) => !isMigrating(alloc)));
  } else if (others.length === 0) {
    toMigrate.push(...system.filter((alloc) => !isMigrating(alloc)));
  } else {
    const services = live.filter((alloc) => alloc.Job.Type === "service");
    const groups = groupBy(services, (alloc) => `${alloc.JobID}\u0000${alloc.TaskGroup}`);
    for (const allocs of groups.values()) {
      const first = allocs[0]!;
      const room = maxParallel(allocTaskGroup(first)) - allocs.filter(isMigrating).length;
      toMigrate.push(...allocs.filter((alloc) => !isMigrating(alloc) && isJudged(alloc)).slice(0, Math.max(0, room)));
    }
  }

  if (toMigrate.length > 0) {
    for (const alloc of toMigrate) {
      txn.allocs.put(alloc.ID, {
        ...alloc,
        DesiredStatus: "stop",
        DesiredDescription: MIGRATING,
        DesiredTransition: { ...alloc.DesiredTransition, Migrate: true },
        ModifyIndex: txn.index,
        AllocModifyIndex: txn.index,
        ModifyTime: txn.now,
      });
    }
    for (const jobId of new Set(toMigrate.map((alloc) => alloc.JobID))) evaluate(txn, deps, jobId, "node-drain");
    const left = live.length - toMigrate.length - live.filter(isMigrating).length;
    const message = forced
      ? `Drain deadline reached: migrating the ${toMigrate.length} remaining allocation(s)`
      : `Migrating ${toMigrate.length} allocation(s); ${left} more to migrate`;
    txn.nodes.put(node.ID, withNodeEvent(txn, node, "Drain", message, { alloc_ids: toMigrate.map((alloc) => alloc.ID).join(",") }));
    return;
  }

  if (live.length > 0) return;
  const current = txn.nodes.get(node.ID)!;
  txn.nodes.put(
    node.ID,
    withNodeEvent(txn, { ...current, Drain: false, DrainStrategy: null }, "Drain", DRAIN_COMPLETE, forced && strategy.Deadline >= 0 ? { deadline_reached: "true" } : null),
  );
}
