/**
 * Affinities (Nomad's NodeAffinityIterator): a preference, never a filter.
 * A node's score is the sum of the weights of the affinities it matches
 * over the sum of all their absolute weights, in [-1, 1]. With one node
 * there is nothing to choose between; the score is still recorded in the
 * placement metrics (`nomad alloc status -verbose` shows it).
 */
import type { Job, TaskGroup } from "../../../structs/job.ts";
import type { Node } from "../../../structs/node.ts";
import { meetsConstraint } from "./constraints.ts";

export function affinityScore(job: Job, group: TaskGroup, node: Node): number | undefined {
  const affinities = [...job.Affinities, ...group.Affinities, ...group.Tasks.flatMap((task) => task.Affinities)];
  if (affinities.length === 0) return undefined;
  let total = 0;
  let matched = 0;
  for (const affinity of affinities) {
    total += Math.abs(affinity.Weight);
    if (meetsConstraint(affinity, node)) matched += affinity.Weight;
  }
  return total === 0 ? 0 : matched / total;
}
