/**
 * Names that become directory and file names on the node (groups, tasks):
 * the one rule the job parser checks and the alloc dir relies on.
 */

/** Longest group or task name; file names built from it stay under NAME_MAX. */
export const MAX_NAME_LENGTH = 200;

export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return "must not be empty";
  if (name.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  if (/[/\x00]/.test(name)) return "must not contain '/' or NUL";
  if (name === "." || name === "..") return `must not be "${name}"`;
  if (/\s/.test(name)) return "must not contain whitespace";
  return undefined;
}

/** A task's directory sits beside the alloc's shared `alloc/` one. */
export function taskNameProblem(name: string): string | undefined {
  return name === "alloc" ? 'must not be "alloc" (the shared alloc directory has that name)' : nameProblem(name);
}
