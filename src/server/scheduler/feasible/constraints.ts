/**
 * A group's constraints against a node (Nomad's ConstraintChecker over the
 * job's, the group's and its tasks' constraints). A failure is named as
 * Nomad names it in ConstraintFiltered, `<LTarget> <Operand> <RTarget>`,
 * which is what `nomad job status` prints under "Placement Failure".
 */
import type { Constraint, Job, TaskGroup } from "../../../structs/job.ts";
import type { Node } from "../../../structs/node.ts";
import { checkOperand } from "./operators.ts";
import { resolveTarget } from "./targets.ts";

/** Nomad's Constraint.String(). */
export function constraintText(constraint: Constraint): string {
  return `${constraint.LTarget} ${constraint.Operand} ${constraint.RTarget}`;
}

export function meetsConstraint(constraint: Pick<Constraint, "LTarget" | "RTarget" | "Operand">, node: Node): boolean {
  return checkOperand(constraint.Operand, resolveTarget(constraint.LTarget, node), resolveTarget(constraint.RTarget, node));
}

/** The job's constraints first (Nomad checks them before the group's), then the group's and its tasks'. */
export function groupConstraints(job: Job, group: TaskGroup): { job: readonly Constraint[]; group: readonly Constraint[] } {
  return { job: job.Constraints, group: [...group.Constraints, ...group.Tasks.flatMap((task) => task.Constraints)] };
}

/** The first of `constraints` the node fails, as Nomad names it; undefined when it meets them all. */
export function failedConstraint(constraints: readonly Constraint[], node: Node): string | undefined {
  const failed = constraints.find((constraint) => !meetsConstraint(constraint, node));
  return failed ? constraintText(failed) : undefined;
}
