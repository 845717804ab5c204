/**
 * A job in Nomad's API JSON, checked and completed the way the server takes
 * it, whichever way it came (POST /v1/jobs, a .json job file, or an HCL file
 * read by src/jobspec/hcl-job.ts):
 *
 *   refuse Nomad features drover lacks, by name ──> drop server-set fields
 *     ──> Nomad's defaults ──> schema (src/structs/job.ts) ──> cross-field rules
 *
 * Every problem is collected and reported at once, each naming its field in
 * the spelling of the document the operator wrote.
 */
import * as v from "valibot";
import { requiredMessage, ValidationError } from "../lib/validation.ts";
import { JobSchema, type Job } from "../structs/job.ts";
import { applyJobDefaults } from "./defaults.ts";
import { childLevel, JOB, restrictedMessage, unsupportedMessage, type Level } from "./fields.ts";
import { renderPath, type PathSegment, type PathStyle } from "./paths.ts";
import { validateJob } from "./validate.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** Nomad's JSON carries unused features as null, "", 0, false, [] or {}; only a real value is refused. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === "" || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

/**
 * Walks `node` (at `at` in the job) against `level`: records refusals, and
 * returns a copy without the fields the server sets or that Nomad fills with
 * nothing.
 */
function checkLevel(level: Level, node: Json, at: PathSegment[], refuse: (path: PathSegment[], message: string) => void): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    const unsupported = level.unsupported.find((entry) => entry.json === key);
    if (unsupported) {
      if (!isEmpty(value)) refuse([...at, key], unsupportedMessage(unsupported));
      continue;
    }
    if (level.ignored?.includes(key)) continue;
    const rule = level.restricted?.[key];
    if (rule && typeof value === "string" && !rule.allowed.includes(value)) refuse([...at, key], restrictedMessage(rule, value));
    const child = childLevel(level, key);
    out[key] = child ? checkChild(child, value, [...at, key], refuse) : value;
  }
  return out;
}

function checkChild(level: Level, value: unknown, at: PathSegment[], refuse: (path: PathSegment[], message: string) => void): unknown {
  if (Array.isArray(value)) return value.map((item, i) => (isObject(item) ? checkLevel(level, item, [...at, i], refuse) : item));
  return isObject(value) ? checkLevel(level, value, at, refuse) : value;
}

/** "Invalid type: Expected number but received "x"" -> "expected number, got "x"". */
function issueMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.type === "strict_object" && issue.expected === "never") return "unknown field";
  if (issue.received === "undefined") return requiredMessage(issue);
  if (/^Invalid \w+: /.test(issue.message) && issue.expected !== null) {
    const expected = issue.expected.replace(/^>=/, "at least ").replace(/^<=/, "at most ");
    return `expected ${expected}, got ${issue.received}`;
  }
  return issue.message;
}

function issuePath(issue: v.BaseIssue<unknown>): PathSegment[] {
  return (issue.path ?? []).map((item) => (typeof item.key === "number" ? item.key : String(item.key)));
}

export interface JobSource {
  /** Names the input in messages: the file, or "job" for an API body. */
  source: string;
  /** The spelling field paths are given in. */
  style: PathStyle;
}

/** The complete, valid Job in `raw` (API JSON, unwrapped), or a ValidationError listing every problem. */
export function jobFromApi(raw: unknown, { source, style }: JobSource): Job {
  if (!isObject(raw)) throw new ValidationError(source, ["expected a job object"]);
  const problems: string[] = [];
  const checked = checkLevel(JOB, raw, [], (path, message) => problems.push(`${renderPath(style, raw, path)}: ${message}`));
  if (problems.length > 0) throw new ValidationError(source, problems);

  const filled = applyJobDefaults(checked);
  const parsed = v.safeParse(JobSchema, filled);
  const found = parsed.success
    ? validateJob(parsed.output)
    : parsed.issues.map((issue) => ({ path: issuePath(issue), message: issueMessage(issue) }));
  if (!parsed.success || found.length > 0) {
    throw new ValidationError(
      source,
      found.map((problem) => `${renderPath(style, filled, problem.path)}: ${problem.message}`),
    );
  }
  return parsed.output;
}
