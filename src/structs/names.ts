/**
 * Names and identifiers a job carries into paths, URLs, environments and
 * terminals: the rules the job validator checks, each once. Groups and tasks
 * become directory and file names on the node; a job ID becomes part of API
 * paths and alloc names; a user and env entries reach execve.
 */

/** Longest group or task name; file names built from it stay under NAME_MAX. */
export const MAX_NAME_LENGTH = 200;
/** Longest job ID: it is part of every alloc name and API path of the job. */
export const MAX_JOB_ID_LENGTH = 128;
/** Longest job name (free text, shown by the CLI). */
export const MAX_JOB_NAME_LENGTH = 256;
/** Longest user name a task may run as (Linux allows 32; a uid fits easily). */
export const MAX_USER_LENGTH = 256;

/**
 * Control characters (C0, DEL, C1) and Unicode format characters (bidi
 * overrides such as U+202E, zero-width marks): they make a name print as
 * something else on an operator's terminal.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u;

function invisibleProblem(text: string): string | undefined {
  const match = INVISIBLE.exec(text);
  if (!match) return undefined;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
  return `must not contain control or invisible characters (found U+${code})`;
}

/** What keeps a value usable as one path segment and printable: group and task names, job IDs. */
function pathSegmentProblem(value: string, maxLength: number): string | undefined {
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  if (value.includes("/")) return "must not contain '/'";
  if (value === "." || value === "..") return `must not be "${value}"`;
  if (/\s/.test(value)) return "must not contain whitespace";
  return invisibleProblem(value);
}

export function nameProblem(name: string): string | undefined {
  return name.length === 0 ? "must not be empty" : pathSegmentProblem(name, MAX_NAME_LENGTH);
}

/** A task's directory sits beside the alloc's shared `alloc/` one. */
export function taskNameProblem(name: string): string | undefined {
  return name === "alloc" ? 'must not be "alloc" (the shared alloc directory has that name)' : nameProblem(name);
}

/** Nomad refuses a space in a job ID; drover also keeps IDs path-safe and printable. */
export function jobIdProblem(id: string): string | undefined {
  return pathSegmentProblem(id, MAX_JOB_ID_LENGTH);
}

export function jobNameProblem(name: string): string | undefined {
  if (name.length > MAX_JOB_NAME_LENGTH) return `must be at most ${MAX_JOB_NAME_LENGTH} characters`;
  return invisibleProblem(name);
}

export function userProblem(user: string): string | undefined {
  if (user.length > MAX_USER_LENGTH) return `must be at most ${MAX_USER_LENGTH} characters`;
  return invisibleProblem(user);
}

/** execve takes NAME=value strings: a name with '=' or NUL, or a value with NUL, cannot be passed. */
export function envEntryProblem(name: string, value: string): string | undefined {
  if (name.length === 0) return "an environment variable needs a name";
  if (name.includes("=")) return `variable name "${name}" must not contain '='`;
  if (name.includes("\0")) return "variable names must not contain NUL";
  if (value.includes("\0")) return `variable "${name}" must not contain NUL`;
  return undefined;
}
