/**
 * What a plan says each group's allocs would undergo (Nomad's
 * DesiredUpdates), and the same written onto the job's diff: the group's
 * counts by kind of update, and on each task what its change forces.
 */
import type { Job } from "../structs/job.ts";
import type { JobDiff } from "../structs/job-diff.ts";
import { DESIRED, type ReconcileResult } from "./scheduler/reconcile.ts";

export interface DesiredUpdates {
  Ignore: number;
  Place: number;
  Migrate: number;
  Stop: number;
  InPlaceUpdate: number;
  DestructiveUpdate: number;
  Canary: number;
  Preemptions: number;
}

const none = (): DesiredUpdates => ({ Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 });

/** Nomad's names for the kinds of update in a group's diff (scheduler.UpdateType*). */
const UPDATE_NAMES: [keyof DesiredUpdates, string][] = [
  ["Ignore", "ignore"],
  ["Place", "create"],
  ["Stop", "destroy"],
  ["Migrate", "migrate"],
  ["InPlaceUpdate", "in-place update"],
  ["DestructiveUpdate", "create/destroy update"],
  ["Canary", "canary"],
];

/** Per group of `job`: how many allocs reconciling would leave, place, stop, or update in place or by replacement. */
export function desiredUpdates(job: Job, plan: ReconcileResult): Record<string, DesiredUpdates> {
  const out: Record<string, DesiredUpdates> = Object.fromEntries(job.TaskGroups.map((group) => [group.Name, none()]));
  const group = (name: string) => (out[name] ??= none());
  const replaced = new Set<string>();
  for (const { alloc, description } of plan.stop) {
    if (description === DESIRED.updating) {
      group(alloc.TaskGroup).DestructiveUpdate++;
      replaced.add(alloc.ID);
    } else {
      group(alloc.TaskGroup).Stop++;
    }
  }
  for (const alloc of plan.inPlace) group(alloc.TaskGroup).InPlaceUpdate++;
  for (const { group: placed, previous, canary } of plan.place) {
    if (canary) group(placed.Name).Canary++;
    else if (!previous || !replaced.has(previous.ID)) group(placed.Name).Place++;
  }
  for (const alloc of plan.ignore) group(alloc.TaskGroup).Ignore++;
  return out;
}

/**
 * `diff` with each group's update counts and each changed task's
 * consequence, as Nomad's plan annotates them. A change forces a
 * create/destroy update when its group changes destructively (`destructive`
 * names those groups), whether or not the update strategy lets the
 * replacement happen in this round.
 */
export function annotateDiff(diff: JobDiff, updates: Record<string, DesiredUpdates>, destructive: ReadonlySet<string>): JobDiff {
  return {
    ...diff,
    TaskGroups:
      diff.TaskGroups?.map((group) => {
        const counts = updates[group.Name];
        const named = counts ? UPDATE_NAMES.filter(([key]) => counts[key] > 0).map(([key, name]) => [name, counts[key]] as const) : [];
        const replaces = destructive.has(group.Name);
        return {
          ...group,
          Updates: named.length > 0 ? Object.fromEntries(named) : null,
          Tasks:
            group.Tasks?.map((task) => {
              const annotation =
                task.Type === "Added"
                  ? "forces create"
                  : task.Type === "Deleted"
                    ? "forces destroy"
                    : task.Type === "Edited"
                      ? replaces
                        ? "forces create/destroy update"
                        : "forces in-place update"
                      : undefined;
              return { ...task, Annotations: annotation ? [annotation] : null };
            }) ?? null,
        };
      }) ?? null,
  };
}
