/**
 * Reading the job file that `job run`, `job plan` and `job validate` take,
 * with the HCL2 variables (`-var k=v`, `-var-file path`) Nomad's CLI takes
 * for it. Every command reads its file through loadJobFile, so the
 * variables reach the parser in one place.
 */
import { readFileSync } from "node:fs";
import { parseCliJobFile } from "../../jobspec/index.ts";
import type { Job } from "../../structs/job.ts";
import { ALL_NAMESPACES } from "../../structs/namespace.ts";
import { UsageError, type FlagSpec, type ParsedFlags } from "../flags.ts";

export const JOB_FILE_FLAGS = { booleans: ["json"], repeated: ["var", "var-file"] } as const satisfies FlagSpec;
export const JOB_FILE_USAGE = `  -json              The file is API JSON (default: JSON when it starts with "{").
  -var 'key=value'   An HCL2 variable for the job file; may be repeated.
  -var-file <path>   A file of HCL2 variable values (HCL or JSON); may be repeated.
                     NOMAD_VAR_<name> in the environment sets variables too.`;

export interface JobFileInput {
  path: string;
  json: boolean;
  vars: readonly string[];
  varFiles: readonly string[];
  /** The command's environment, for NOMAD_VAR_<name>. */
  env: Readonly<Record<string, string | undefined>>;
  /** -namespace or NOMAD_NAMESPACE (the client's): where a job file that names no namespace goes, as in Nomad. */
  namespace: string | undefined;
}

export function jobFileInput(path: string, flags: ParsedFlags, env: JobFileInput["env"], namespace: string | undefined): JobFileInput {
  return { path, json: flags.booleans.json ?? false, vars: flags.repeated.var ?? [], varFiles: flags.repeated["var-file"] ?? [], env, namespace };
}

function readJobText(path: string): string {
  try {
    return readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read job file ${path}: ${(err as Error).message}`);
  }
}

/** The job the file describes ("-": stdin), checked as registering would check it unless `validate` is false. */
export function loadJobFile(input: JobFileInput, validate = true): Promise<Job> {
  return parseCliJobFile(input.path, readJobText(input.path), input.json ? "json" : undefined, {
    vars: input.vars,
    varFiles: input.varFiles,
    env: input.env,
    validate,
    // "*" names every namespace, none to put a job in: such a job stays in default.
    ...(input.namespace && input.namespace !== ALL_NAMESPACES ? { namespace: input.namespace } : {}),
  });
}
