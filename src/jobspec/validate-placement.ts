/**
 * Nomad's Constraint.Validate and Affinity.Validate: each operator's needs
 * (an RTarget, a regular expression that compiles, a version constraint
 * that parses, a distinct_property limit of at least 1), checked on
 * register so a bad constraint is a 400 naming it rather than a job that
 * silently never places.
 */
import { parseConstraint } from "../lib/version-constraint.ts";
import type { Job, TaskGroup } from "../structs/job.ts";
import type { PathSegment } from "./paths.ts";
import type { Problem } from "./validate.ts";

interface Rule {
  LTarget: string;
  RTarget: string;
  Operand: string;
  Weight?: number;
}

const COMPARISONS = new Set(["=", "==", "is", "!=", "not", "<", "<=", ">", ">="]);
const SET_OPERATORS = new Set(["set_contains", "set_contains_all", "set_contains_any"]);

function ruleProblems(rule: Rule, path: PathSegment[], affinity: boolean): Problem[] {
  const problems: Problem[] = [];
  const at = (field: string, message: string) => problems.push({ path: [...path, field], message });
  let needsLTarget = true;
  if (rule.Operand === "") at("Operand", `missing ${affinity ? "affinity" : "constraint"} operand`);
  else if (COMPARISONS.has(rule.Operand)) {
    if (rule.RTarget === "") at("RTarget", `operator "${rule.Operand}" requires an RTarget`);
  } else if (SET_OPERATORS.has(rule.Operand)) {
    if (rule.RTarget === "") at("RTarget", "set contains operators require an RTarget");
  } else if (rule.Operand === "regexp") {
    try {
      new RegExp(rule.RTarget);
    } catch (err) {
      at("RTarget", `regular expression failed to compile: ${(err as Error).message}`);
    }
  } else if (rule.Operand === "version" || rule.Operand === "semver") {
    const parsed = parseConstraint(rule.RTarget, rule.Operand);
    if (typeof parsed === "string") at("RTarget", `${rule.Operand} ${affinity ? "affinity" : "constraint"} is invalid: ${parsed}`);
  } else if (!affinity && rule.Operand === "distinct_hosts") {
    needsLTarget = false;
  } else if (!affinity && rule.Operand === "distinct_property") {
    if (rule.RTarget !== "" && !(/^\d+$/.test(rule.RTarget) && Number(rule.RTarget) >= 1)) {
      at("RTarget", `distinct_property's allowed count must be a whole number of 1 or more (got "${rule.RTarget}")`);
    }
  } else if (!affinity && (rule.Operand === "is_set" || rule.Operand === "is_not_set")) {
    if (rule.RTarget !== "") at("RTarget", `operator "${rule.Operand}" does not support an RTarget`);
  } else {
    at("Operand", `unknown ${affinity ? "affinity operator" : "constraint type"} "${rule.Operand}"`);
  }
  if (needsLTarget && rule.LTarget === "") at("LTarget", "no LTarget provided but it is required");
  if (affinity && rule.Weight === 0) at("Weight", "affinity weight cannot be zero");
  return problems;
}

function listProblems(rules: readonly Rule[], path: PathSegment[], affinity: boolean): Problem[] {
  return rules.flatMap((rule, i) => ruleProblems(rule, [...path, i], affinity));
}

/** The job's, its groups' and its tasks' constraints and affinities. */
export function placementProblems(job: Job): Problem[] {
  const of = (owner: Pick<Job, "Constraints" | "Affinities">, path: PathSegment[]) => [
    ...listProblems(owner.Constraints, [...path, "Constraints"], false),
    ...listProblems(owner.Affinities, [...path, "Affinities"], true),
  ];
  return [
    ...of(job, []),
    ...job.TaskGroups.flatMap((group: TaskGroup, g) => [
      ...of(group, ["TaskGroups", g]),
      ...group.Tasks.flatMap((task, t) => of(task, ["TaskGroups", g, "Tasks", t])),
    ]),
  ];
}
