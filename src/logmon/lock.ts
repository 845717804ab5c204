/**
 * One logmon per host: two would read the same FIFOs and interleave their
 * bytes. The lock is an flock(2) on a file in the state dir, held for the
 * process's life and dropped by the kernel when it dies, however it dies.
 */
import { constants, openSync } from "node:fs";
import { flock, LOCK_EX, LOCK_NB, O_CLOEXEC_FLAG } from "../runtime/libc.ts";

export const LOCK_FILE = "logmon.lock";

/** Interval between tries while a previous logmon is still dying. */
const LOCK_RETRY_MS = 25;

/**
 * Takes the lock at `path`, trying for up to `waitMs`. Returns false when
 * another process keeps it.
 */
export async function acquireLock(path: string, waitMs: number): Promise<boolean> {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | O_CLOEXEC_FLAG, 0o600);
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}
