/**
 * Job files: Nomad's HCL2 job specification or its API JSON
 * (`{"Job": {...}}`), read into a complete, valid Job. A problem ends the
 * read with a ValidationError (an HclSyntaxError for HCL's own) in which
 * every problem reads `file:line,col: field path: message`.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseHcl } from "../lib/hcl.ts";
import { ValidationError } from "../lib/validation.ts";
import type { Job } from "../structs/job.ts";
import { jobFromApi } from "./api-job.ts";
import { evaluateJobDocument, type VariableInputs } from "./hcl2/index.ts";
import { jobFromHclDocument } from "./hcl-job.ts";
import { jsonSyntaxPosition, locateProblems, type JobFormat } from "./locate.ts";

export { jobFromApi } from "./api-job.ts";

export interface ParseOptions {
  /** Also apply Nomad's Job.Validate (the default); off checks shapes only, as Nomad's parser does. */
  validate?: boolean;
  /** HCL2 variable values: -var arguments, var files (see jobVariableFiles), NOMAD_VAR_ environment. */
  variables?: VariableInputs;
  /**
   * The folder file() and the other file functions read relative paths from
   * (the job file's); when absent (a job sent to the API), those functions
   * refuse, as Nomad's do.
   */
  filesDir?: string;
  /**
   * Read as Nomad's HCL1 parser would (the parse endpoint's HCLv1): no HCL2
   * evaluation; `${...}` is kept only where it is a reference the client resolves.
   */
  hcl1?: boolean;
  /** The namespace of a job that names none (JobSource.namespace). */
  namespace?: string;
}

/** What the CLI's -var and -var-file flags give, and the environment NOMAD_VAR_<name> is read from. */
export interface CliJobFileOptions {
  vars?: readonly string[];
  varFiles?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  /** As ParseOptions.validate (`job validate` and `plan` may want shapes only). */
  validate?: boolean;
  /** The CLI's -namespace (or NOMAD_NAMESPACE): where a job that names none goes. */
  namespace?: string;
}

/**
 * A job file as the CLI reads it (`job run`, `plan`, `validate`): HCL2
 * variables from -var, -var-file and NOMAD_VAR_*, file functions relative to
 * the file (stdin, "-": the working directory). Parses only; the caller
 * registers, plans or validates.
 */
export async function parseCliJobFile(
  path: string,
  text: string,
  format: JobFormat | undefined,
  { vars = [], varFiles = [], env = {}, validate, namespace }: CliJobFileOptions,
): Promise<Job> {
  const files = await jobVariableFiles(
    varFiles.map((name) => {
      try {
        return { name, text: readFileSync(name, "utf8") };
      } catch (err) {
        throw new ValidationError(name, [`cannot read the var file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
      }
    }),
  );
  const filesDir = path === "-" ? process.cwd() : dirname(resolve(path));
  return parseJobFile(path, text, format, { variables: { args: vars, files, env }, filesDir, validate, ...(namespace ? { namespace } : {}) });
}

/** Var files (`-var-file`, the API's `Variables`): HCL or JSON text, parsed for parseJobHcl's `variables.files`. */
export async function jobVariableFiles(files: readonly { name: string; text: string }[]): Promise<NonNullable<VariableInputs["files"]>> {
  const parsed: NonNullable<VariableInputs["files"]>[number][] = [];
  for (const { name, text } of files) {
    if (text.trimStart().startsWith("{")) {
      try {
        parsed.push({ name, document: JSON.parse(text) as Record<string, unknown> });
      } catch (err) {
        throw new ValidationError(name, [`invalid JSON: ${(err as Error).message}`], [jsonSyntaxPosition(text)]);
      }
    } else parsed.push({ name, document: await parseHcl(name, text) });
  }
  return parsed;
}

/** The same problems, each placed in the file's text. */
function placed(filename: string, text: string, format: JobFormat, problems: string[]): ValidationError {
  return new ValidationError(filename, problems, locateProblems(text, format, problems));
}

/** HCL job text -> Job. `filename` names the text in messages. */
export async function parseJobHcl(filename: string, text: string, { validate = true, variables, filesDir, hcl1 = false, namespace }: ParseOptions = {}): Promise<Job> {
  const parsed = await parseHcl(filename, text);
  const evaluated = hcl1
    ? { document: parsed, problems: [], stage: "job" as const }
    : evaluateJobDocument(parsed, { inputs: variables, allowFs: filesDir !== undefined, baseDir: filesDir ?? "." });
  if (evaluated.stage === "variables") throw placed(filename, text, "hcl", evaluated.problems);
  const read = jobFromHclDocument(evaluated.document, text);
  const job = read.job;
  // A value that could not be evaluated is reported once, as that, not again as a wrong type.
  const unevaluated = (problem: string) => evaluated.problems.some((found) => problem.startsWith(found.slice(0, found.indexOf(": ") + 1)));
  const problems = [...evaluated.problems, ...read.problems.filter((problem) => !unevaluated(problem))];
  // Without a job block the API checks would only add "is required" for every field.
  if (job === undefined) throw placed(filename, text, "hcl", problems);
  try {
    const parsed = jobFromApi(job, { source: filename, style: "hcl", validate, namespace });
    if (problems.length === 0) return parsed;
  } catch (err) {
    // Report what the API checks found too, so one run names every problem.
    if (!(err instanceof ValidationError)) throw err;
    problems.push(...err.problems.filter((problem) => !problems.includes(problem)));
  }
  throw placed(filename, text, "hcl", problems);
}

/** API JSON job text, wrapped as {"Job": {...}} or bare -> Job. */
export function parseJobJson(filename: string, text: string, { validate = true, namespace }: ParseOptions = {}): Job {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(filename, [`invalid JSON: ${(err as Error).message}`], [jsonSyntaxPosition(text)]);
  }
  const wrapped = typeof document === "object" && document !== null && "Job" in document;
  try {
    return jobFromApi(wrapped ? (document as { Job: unknown }).Job : document, { source: filename, style: "json", validate, namespace });
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
