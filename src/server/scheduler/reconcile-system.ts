/**
 * What a system or sysbatch job's allocations should become (Nomad's
 * diffSystemAllocs, scheduler/system_util.go): one alloc of each group on
 * every ready node of the job's datacenters, no count, no deployment.
 *
 *   per node, per group (the alloc named job.group[0]):
 *     live alloc, group gone or job stopped ─────────> stop
 *     live alloc on a node that is down, draining
 *       or ineligible ─────────────────────────────────> keep (the drainer moves it; eligible again: nothing to do)
 *     live alloc on a node outside the datacenters ───> stop
 *     live alloc of an older version ─────────────────> in place, or stop and place again on the node
 *     no live alloc:
 *       sysbatch, finished there at this version ─────> nothing: it ran to completion once on this node
 *       node ready (eligible, not draining) ──────────> place on that node
 *
 * Whether the node can run it (constraints, drivers, room) is the
 * placement's question: one the constraints rule out is skipped without a
 * failure, as Nomad's system scheduler skips it (evaluate.ts).
 */
import { groupBy } from "../../lib/group-by.ts";
import { isAllocTerminal, type Allocation } from "../../structs/alloc.ts";
import type { Job } from "../../structs/job.ts";
import type { Node } from "../../structs/node.ts";
import { nodeInPool } from "../../structs/node-pool.ts";
import { datacenterMatches } from "./placement.ts";
import { changesDestructively, DESIRED, type ReconcileInput, type ReconcileResult } from "./reconcile.ts";

/** Nomad's Node.Ready: new system allocs go only to such a node. */
function isReady(node: Node): boolean {
  return node.Status === "ready" && node.SchedulingEligibility === "eligible" && !node.Drain && node.DrainStrategy === null;
}

const newestFirst = (a: Allocation, b: Allocation) => b.CreateIndex - a.CreateIndex;

export function reconcileSystem(input: ReconcileInput, nodes: readonly Node[]): ReconcileResult {
  const result: ReconcileResult = { ignore: [], stop: [], inPlace: [], place: [], rescheduleLater: [], deployment: undefined, deploymentIsNew: false, deploymentUpdates: [] };
  const { job, allocs } = input;
  const live = allocs.filter((alloc) => !isAllocTerminal(alloc));
  if (!job || job.Stop) {
    for (const alloc of live) result.stop.push({ alloc, description: DESIRED.notNeeded });
    return result;
  }
  const inDatacenters = nodes.filter((node) => datacenterMatches(job.Datacenters, node.Datacenter) && nodeInPool(job.NodePool, node.NodePool));
  const targeted = new Set(inDatacenters.map((node) => node.ID));
  const byNode = groupBy(allocs, (alloc) => alloc.NodeID);
  const nodeIds = new Set([...inDatacenters.map((node) => node.ID), ...byNode.keys()]);
  const nodeById = new Map(nodes.map((node) => [node.ID, node]));

  for (const nodeId of nodeIds) {
    const node = nodeById.get(nodeId);
    const onNode = byNode.get(nodeId) ?? [];
    for (const group of job.TaskGroups) {
      const mine = onNode.filter((alloc) => alloc.TaskGroup === group.Name).sort(newestFirst);
      const running = mine.filter((alloc) => !isAllocTerminal(alloc));
      // Only one may run per node and group; older duplicates go.
      for (const extra of running.slice(1)) result.stop.push({ alloc: extra, description: DESIRED.notNeeded });
      const current = running[0];
      if (current) {
        if (!node || !isReady(node)) result.ignore.push(current);
        else if (!targeted.has(nodeId)) result.stop.push({ alloc: current, description: DESIRED.notNeeded });
        else if (current.Job.JobModifyIndex === job.JobModifyIndex) result.ignore.push(current);
        else if (!changesDestructively(current.Job, job, group)) result.inPlace.push(current);
        else {
          result.stop.push({ alloc: current, description: DESIRED.updating });
          result.place.push({ group, index: 0, previous: current, canary: false, reschedule: false, nodeId });
        }
        continue;
      }
      const finished = mine[0];
      if (job.Type === "sysbatch" && finished && finished.Job.JobModifyIndex === job.JobModifyIndex && finished.ClientStatus !== "lost") {
        result.ignore.push(finished);
        continue;
      }
      if (!node || !isReady(node) || !targeted.has(nodeId)) continue;
      result.place.push({ group, index: 0, previous: finished?.NextAllocation === "" ? finished : undefined, canary: false, reschedule: false, nodeId });
    }
  }
  for (const alloc of live) {
    if (!job.TaskGroups.some((group) => group.Name === alloc.TaskGroup)) result.stop.push({ alloc, description: DESIRED.notNeeded });
  }
  return result;
}

/** The job types Nomad's system scheduler places: one alloc per node, whatever the count. */
export function isSystemType(job: Pick<Job, "Type">): boolean {
  return job.Type === "system" || job.Type === "sysbatch";
}
