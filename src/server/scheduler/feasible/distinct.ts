/**
 * distinct_hosts and distinct_property (Nomad's DistinctHostsIterator and
 * DistinctPropertyIterator): whether one more alloc of the group may go on
 * a node, given the allocs already there or proposed in this round. On one
 * node, distinct_hosts allows one alloc of the job (or group) and
 * distinct_property as many as its limit (RTarget, default 1).
 */
import type { Constraint, Job, TaskGroup } from "../../../structs/job.ts";
import type { Node } from "../../../structs/node.ts";
import { DISTINCT_HOSTS, DISTINCT_PROPERTY } from "./operators.ts";
import { resolveTarget } from "./targets.ts";

/** An alloc that runs, or will once this round's plan lands. */
export interface ProposedAlloc {
  JobID: string;
  TaskGroup: string;
  NodeID: string;
}

/** Why `node` cannot take another alloc of `group` under its distinct_* constraints, or undefined. */
export function distinctProblem(
  job: Job,
  group: TaskGroup,
  node: Node,
  proposed: readonly ProposedAlloc[],
  nodeById: (id: string) => Node | undefined,
): string | undefined {
  const scoped = [
    ...job.Constraints.map((constraint) => ({ constraint, groupOnly: false })),
    ...group.Constraints.map((constraint) => ({ constraint, groupOnly: true })),
  ];
  for (const { constraint, groupOnly } of scoped) {
    const mine = (alloc: ProposedAlloc) => alloc.JobID === job.ID && (!groupOnly || alloc.TaskGroup === group.Name);
    if (constraint.Operand === DISTINCT_HOSTS) {
      if (proposed.some((alloc) => alloc.NodeID === node.ID && mine(alloc))) return DISTINCT_HOSTS;
    } else if (constraint.Operand === DISTINCT_PROPERTY) {
      const problem = propertyProblem(constraint, node, proposed.filter(mine), nodeById);
      if (problem) return problem;
    }
  }
  return undefined;
}

function propertyProblem(constraint: Constraint, node: Node, mine: readonly ProposedAlloc[], nodeById: (id: string) => Node | undefined): string | undefined {
  const property = resolveTarget(constraint.LTarget, node);
  if (!property.found) return `missing property "${constraint.LTarget}"`;
  const allowed = constraint.RTarget === "" ? 1 : Number(constraint.RTarget);
  const used = mine.filter((alloc) => {
    const other = nodeById(alloc.NodeID);
    return other !== undefined && resolveTarget(constraint.LTarget, other).value === property.value;
  }).length;
  return used >= allowed ? `${DISTINCT_PROPERTY}: ${constraint.LTarget}=${property.value} used by ${used} allocs` : undefined;
}
