/**
 * What a job's allocations should become (Nomad's reconciler, for one node
 * and no deployments): compares the job's groups and counts with the allocs
 * it has and answers which to stop, which to move to the new job version in
 * place, and which indexes need a new alloc.
 *
 *   job stopped or purged ────────────────> stop every alloc still told to run
 *   alloc's group gone / index >= count ──> stop
 *   alloc of an older version:
 *     group unchanged but for count ──────> in place (the alloc gets the new version)
 *     otherwise ──────────────────────────> stop, and place a replacement at its index
 *   index with no alloc told to run ──────> place (linked to the last alloc
 *                                           stopped at that index: PreviousAllocation)
 *
 * An alloc that finished on the client but is still told to run (a batch
 * task that completed) keeps its index: it is not run again.
 */
import { allocIndex, allocTaskGroup, type Allocation } from "../../structs/alloc.ts";
import type { Job, TaskGroup } from "../../structs/job.ts";

/** Nomad's DesiredDescription texts. */
export const DESIRED = {
  notNeeded: "alloc not needed due to job update",
  updating: "alloc is being updated due to job update",
  stopped: "alloc was stopped by the operator",
} as const;

export interface ReconcileResult {
  /** Allocs that stay as they are. */
  ignore: Allocation[];
  stop: { alloc: Allocation; description: string }[];
  inPlace: Allocation[];
  place: { group: TaskGroup; index: number; previous: Allocation | undefined }[];
}

/** The parts of a job an alloc's tasks see; any change to them restarts the tasks. */
function runtimeView(job: Job, group: TaskGroup): string {
  const { Count: _count, ...rest } = group;
  return JSON.stringify([rest, job.Name, job.Meta, job.Region, job.Datacenters]);
}

function needsReplacement(alloc: Allocation, job: Job, group: TaskGroup): boolean {
  const old = allocTaskGroup({ Job: alloc.Job, TaskGroup: group.Name });
  return !old || runtimeView(alloc.Job, old) !== runtimeView(job, group);
}

/**
 * `allocs`: every alloc of this job's current instance (a purged job's
 * allocs are not passed once its ID is registered again).
 */
export function reconcile(job: Job | undefined, allocs: readonly Allocation[]): ReconcileResult {
  const result: ReconcileResult = { ignore: [], stop: [], inPlace: [], place: [] };
  const live = allocs.filter((alloc) => alloc.DesiredStatus === "run");
  if (!job || job.Stop) {
    for (const alloc of live) result.stop.push({ alloc, description: DESIRED.notNeeded });
    return result;
  }

  const covered = new Map<string, Set<number>>();
  const cover = (group: string, index: number) => {
    const set = covered.get(group) ?? new Set<number>();
    set.add(index);
    covered.set(group, set);
  };
  // Newest first, so a duplicate at one index stops the older alloc.
  for (const alloc of [...live].sort((a, b) => b.CreateIndex - a.CreateIndex)) {
    const group = job.TaskGroups.find((candidate) => candidate.Name === alloc.TaskGroup);
    const index = allocIndex(alloc.Name);
    if (!group || index >= group.Count || covered.get(group.Name)?.has(index)) {
      result.stop.push({ alloc, description: DESIRED.notNeeded });
      continue;
    }
    cover(group.Name, index);
    if (alloc.Job.JobModifyIndex === job.JobModifyIndex) {
      result.ignore.push(alloc);
      continue;
    }
    if (needsReplacement(alloc, job, group)) {
      result.stop.push({ alloc, description: DESIRED.updating });
      result.place.push({ group, index, previous: alloc });
    } else {
      result.inPlace.push(alloc);
    }
  }

  for (const group of job.TaskGroups) {
    for (let index = 0; index < group.Count; index++) {
      if (covered.get(group.Name)?.has(index)) continue;
      result.place.push({ group, index, previous: lastStopped(allocs, group.Name, index) });
    }
  }
  return result;
}

/** The newest alloc stopped at this index and not yet replaced: the one a new alloc follows. */
function lastStopped(allocs: readonly Allocation[], group: string, index: number): Allocation | undefined {
  let found: Allocation | undefined;
  for (const alloc of allocs) {
    if (alloc.DesiredStatus === "run" || alloc.NextAllocation !== "" || alloc.TaskGroup !== group || allocIndex(alloc.Name) !== index) continue;
    if (!found || alloc.CreateIndex > found.CreateIndex) found = alloc;
  }
  return found;
}
