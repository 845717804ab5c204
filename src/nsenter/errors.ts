/**
 * How the role fails. Its stderr is the task's stderr, so every message names
 * the step and the path; its exit code tells the executor which kind of
 * failure it was (the codes Docker and runc use).
 */
import { errno, strerror } from "../runtime/libc.ts";

/** The isolation could not be built: bad spec, a mount, a namespace, the identity. */
export const EXIT_SETUP_FAILED = 125;
/** The command exists but could not be executed. */
export const EXIT_NOT_EXECUTABLE = 126;
/** The command was not found inside the chroot. */
export const EXIT_NOT_FOUND = 127;

export class IsolationError extends Error {
  override name = "IsolationError";
  constructor(
    message: string,
    readonly exitCode = EXIT_SETUP_FAILED,
  ) {
    super(message);
  }
}

/** Throws an IsolationError saying `what` failed and why, when a libc call returned -1. */
export function must(result: number, what: string, exitCode = EXIT_SETUP_FAILED): void {
  if (result !== -1) return;
  const code = errno();
  throw new IsolationError(`${what}: ${strerror(code)} (errno ${code})`, exitCode);
}
