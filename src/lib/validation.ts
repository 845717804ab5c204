/**
 * Turning valibot issues into messages an operator can act on: the field path
 * in the document's own spelling, then what was wrong.
 */
import * as v from "valibot";

/** A missing value's message; a missing key's issue "expects" the key's own name, which the path already gives. */
export function requiredMessage(issue: v.BaseIssue<unknown>): string {
  const missingKey = issue.type === "object" || issue.type === "strict_object";
  return missingKey ? "is required" : `is required (expected ${issue.expected})`;
}

function describe(issue: v.BaseIssue<unknown>): string {
  const path = v.getDotPath(issue);
  if (issue.kind === "schema" && issue.type === "strict_object" && issue.expected === "never") {
    return `unknown key "${path}"`;
  }
  if (issue.kind === "schema" && issue.received === "undefined") return `${path}: ${requiredMessage(issue)}`;
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** One line per issue, nested issues first-level only (valibot reports the most specific). */
export function formatIssues(issues: readonly v.BaseIssue<unknown>[]): string[] {
  return issues.map(describe);
}

/** Input that failed validation; `problems` lists each bad field. */
export class ValidationError extends Error {
  override name = "ValidationError";
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source}: ${problems.join("; ")}`);
  }
}

/** Parses `input` with `schema`, or throws ValidationError naming `source` and each bad field. */
export function parseOrThrow<S extends v.GenericSchema>(schema: S, input: unknown, source: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw new ValidationError(source, formatIssues(result.issues));
}
