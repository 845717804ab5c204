/**
 * A job in Nomad's API JSON, checked and completed the way the server takes
 * it, whichever way it came (POST /v1/jobs, a .json job file, or an HCL file
 * read by src/jobspec/hcl-job.ts):
 *
 *   drop server-set fields ──> Nomad's defaults ──> schema (src/structs/job.ts)
 *     ──> cross-field rules (src/jobspec/validate.ts)
 *
 * Every field of Nomad's jobspec is kept, whether or not drover runs it.
 * Every problem is collected and reported at once, each naming its field in
 * the spelling of the document the operator wrote.
 */
import * as v from "valibot";
import { requiredMessage, ValidationError } from "../lib/validation.ts";
import { JobSchema, SERVER_SET_JOB_FIELDS, type Job } from "../structs/job.ts";
import { applyJobDefaults } from "./defaults.ts";
import { zeroFill } from "../structs/schema-walk.ts";
import { renderPath, type PathSegment, type PathStyle } from "./paths.ts";
import { validateJob } from "./validate.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

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
  /**
   * Also apply Nomad's Job.Validate (a job to register). Off, only shapes
   * are checked, as Nomad's parser does (POST /v1/jobs/parse, job inspect).
   */
  validate?: boolean;
  /**
   * Where a job that names no namespace goes (the CLI's -namespace), as
   * Nomad's agent puts such a job in the request's; without it, default.
   */
  namespace?: string;
}

/** The complete, valid Job in `raw` (API JSON, unwrapped), or a ValidationError listing every problem. */
export function jobFromApi(raw: unknown, { source, style, validate = true, namespace }: JobSource): Job {
  if (!isObject(raw)) throw new ValidationError(source, ["expected a job object"]);
  const submitted: Json = { ...raw };
  if (namespace && (submitted.Namespace === undefined || submitted.Namespace === null || submitted.Namespace === "")) submitted.Namespace = namespace;
  for (const field of SERVER_SET_JOB_FIELDS) delete submitted[field];
  const filled = zeroFill(JobSchema, applyJobDefaults(submitted));
  const parsed = v.safeParse(JobSchema, filled);
  const found = parsed.success
    ? validate
      ? validateJob(parsed.output)
      : []
    : parsed.issues.map((issue) => ({ path: issuePath(issue), message: issueMessage(issue) }));
  if (!parsed.success || found.length > 0) {
    throw new ValidationError(
      source,
      found.map((problem) => `${renderPath(style, filled, problem.path)}: ${problem.message}`),
    );
  }
  return parsed.output;
}
