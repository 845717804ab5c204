/**
 * HCL2 evaluation of a job file, as Nomad 1.x's jobspec2 does it: variables,
 * locals, functions, dynamic blocks, for expressions, conditionals, splats
 * and template directives, over the document lib/hcl.ts parsed. References
 * only the client can resolve (`${NOMAD_ALLOC_ID}`, `${attr.kernel.name}`,
 * `${meta.x}`, `${env.X}`, `${node.datacenter}`) stay in the job as text.
 *
 *   document ──> variables (defaults, NOMAD_VAR_*, var files, -var) ──> validations
 *            ──> locals (each once, on first use) ──> job block, dynamic blocks expanded
 *            ──> the same document shape, the job block's strings evaluated
 *
 * Every problem reads `field path: message` (variable["x"]: ..., locals.y: ...,
 * job.group["web"].count: ...) for the caller to place in the file.
 */
import { DocumentEvaluator } from "./document.ts";
import { type LazyObject, type Scope } from "./expressions.ts";
import { hclFunctions, type FunctionOptions } from "./functions/index.ts";
import { JobVariables, type VariableInputs } from "./variables.ts";
import type { Value } from "./values.ts";

export { VAR_ENV_PREFIX, type VariableInputs } from "./variables.ts";

export interface EvaluateOptions extends FunctionOptions {
  inputs?: VariableInputs;
}

/** Blocks that feed evaluation and are not part of the job. */
const EVALUATION_BLOCKS = new Set(["variable", "variables", "locals"]);

export function evaluateJobDocument(
  document: Record<string, unknown>,
  { inputs = {}, ...functionOptions }: EvaluateOptions,
): { document: Record<string, unknown>; problems: string[]; stage: "variables" | "job" } {
  const functions = hclFunctions(functionOptions);
  const variables = new JobVariables(functions);
  variables.declare(document);
  variables.assign(inputs);
  const values = variables.values();
  const scopeWith = (locals: LazyObject): Scope => ({
    names: new Map<string, Value | LazyObject>([
      ["var", values],
      ["local", locals],
    ]),
    functions,
    keepUnknown: true,
  });
  const locals = variables.locals(scopeWith);
  if (variables.problems.length === 0) variables.checkLocals(locals);
  // As in Nomad, the job is not read when its variables or locals are wrong.
  if (variables.problems.length > 0) return { document, problems: variables.problems, stage: "variables" };

  const scope = scopeWith(locals);
  const evaluator = new DocumentEvaluator();
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(document)) {
    if (EVALUATION_BLOCKS.has(key)) continue;
    out[key] = key === "job" ? evaluateJobs(evaluator, raw, scope) : raw;
  }
  return { document: out, problems: evaluator.problems, stage: "job" };
}

/** `job "name" {...}`: the label is not part of field paths (`job.group["web"]`), as hcl-job.ts writes them. */
function evaluateJobs(evaluator: DocumentEvaluator, raw: unknown, scope: Scope): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return evaluator.value(raw, "job", scope);
  return Object.fromEntries(Object.entries(raw).map(([label, blocks]) => [label, evaluator.value(blocks, "job", scope)]));
}
