/**
 * Job files: Nomad's HCL2 job specification or its API JSON
 * (`{"Job": {...}}`), read into a complete, valid Job. A problem ends the
 * read with a ValidationError (an HclSyntaxError for HCL's own) in which
 * every problem reads `file:line,col: field path: message`.
 */
import { parseHcl } from "../lib/hcl.ts";
import { ValidationError } from "../lib/validation.ts";
import type { Job } from "../structs/job.ts";
import { jobFromApi } from "./api-job.ts";
import { jobFromHclDocument } from "./hcl-job.ts";
import { jsonSyntaxPosition, locateProblems, type JobFormat } from "./locate.ts";

export { jobFromApi } from "./api-job.ts";

export interface ParseOptions {
  /** Also apply Nomad's Job.Validate (the default); off checks shapes only, as Nomad's parser does. */
  validate?: boolean;
}

/** The same problems, each placed in the file's text. */
function placed(filename: string, text: string, format: JobFormat, problems: string[]): ValidationError {
  return new ValidationError(filename, problems, locateProblems(text, format, problems));
}

/** HCL job text -> Job. `filename` names the text in messages. */
export async function parseJobHcl(filename: string, text: string, { validate = true }: ParseOptions = {}): Promise<Job> {
  const document = await parseHcl(filename, text);
  const { job, problems } = jobFromHclDocument(document, text);
  // Without a job block the API checks would only add "is required" for every field.
  if (job === undefined) throw placed(filename, text, "hcl", problems);
  try {
    const parsed = jobFromApi(job, { source: filename, style: "hcl", validate });
    if (problems.length === 0) return parsed;
  } catch (err) {
    // Report what the API checks found too, so one run names every problem.
    if (!(err instanceof ValidationError)) throw err;
    problems.push(...err.problems.filter((problem) => !problems.includes(problem)));
  }
  throw placed(filename, text, "hcl", problems);
}

/** API JSON job text, wrapped as {"Job": {...}} or bare -> Job. */
export function parseJobJson(filename: string, text: string, { validate = true }: ParseOptions = {}): Job {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(filename, [`invalid JSON: ${(err as Error).message}`], [jsonSyntaxPosition(text)]);
  }
  const wrapped = typeof document === "object" && document !== null && "Job" in document;
  try {
    return jobFromApi(wrapped ? (document as { Job: unknown }).Job : document, { source: filename, style: "json", validate });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw placed(filename, text, "json", err.problems);
  }
}

/** A job file by its content: JSON when it starts with "{", HCL otherwise (as Nomad's -json is rarely needed). */
export function parseJobFile(filename: string, text: string, format?: JobFormat, options: ParseOptions = {}): Promise<Job> {
  const json = format === "json" || (format === undefined && text.trimStart().startsWith("{"));
  return json ? Promise.resolve().then(() => parseJobJson(filename, text, options)) : parseJobHcl(filename, text, options);
}
