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

/** A place in a file, counted from 1 as editors and HCL count. */
export interface SourcePosition {
  line: number;
  column: number;
}

/** The position of `offset` (a UTF-16 index) in `text`. */
export function positionAt(text: string, offset: number): SourcePosition {
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: offset - before.lastIndexOf("\n") };
}

/**
 * Input that failed validation; `problems` lists each bad field. When the
 * input is a file whose problems were placed, `positions` gives each one's
 * place and every problem reads `file:line,col: field path: message`.
 */
export class ValidationError extends Error {
  override name = "ValidationError";
  constructor(
    readonly source: string,
    readonly problems: string[],
    readonly positions: readonly SourcePosition[] = [],
  ) {
    super(positions.length > 0 ? locatedLines(source, problems, positions).join("; ") : `${source}: ${problems.join("; ")}`);
  }

  /** One line per problem, each naming the source (and its place, when known). */
  lines(): string[] {
    return this.positions.length > 0 ? locatedLines(this.source, this.problems, this.positions) : this.problems.map((problem) => `${this.source}: ${problem}`);
  }
}

function locatedLines(source: string, problems: readonly string[], positions: readonly SourcePosition[]): string[] {
  return problems.map((problem, i) => {
    const at = positions[i];
    return at ? `${source}:${at.line},${at.column}: ${problem}` : `${source}: ${problem}`;
  });
}

/** Parses `input` with `schema`, or throws ValidationError naming `source` and each bad field. */
export function parseOrThrow<S extends v.GenericSchema>(schema: S, input: unknown, source: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw new ValidationError(source, formatIssues(result.issues));
}
