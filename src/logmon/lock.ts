/**
 * One logmon per host: two would read the same FIFOs and interleave their
 * bytes. The lock is an flock(2) on a file in the state dir, held for the
 * process's life and dropped by the kernel when it dies, however it dies.
 */
import { closeSync, constants, openSync } from "node:fs";
import { flock, LOCK_EX, LOCK_NB, O_CLOEXEC_FLAG } from "../runtime/libc.ts";

export const LOCK_FILE = "logmon.lock";

/** Interval between tries while a previous logmon is still dying. */
const LOCK_RETRY_MS = 25;

export type LockOutcome = "acquired" | "yielded" | "busy";

/**
 * Takes the lock at `path`, trying for up to `waitMs`. Between tries it asks
 * `yieldTo` whether another logmon already serves, and stops trying if so:
 * a logmon that waited out a live winner would take over the moment that
 * winner is stopped, and run on with nobody to stop it.
 */
export async function acquireLock(path: string, waitMs: number, yieldTo: () => Promise<boolean>): Promise<LockOutcome> {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | O_CLOEXEC_FLAG, 0o600);
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) === 0) return "acquired";
    const outcome = (await yieldTo()) ? "yielded" : Date.now() >= deadline ? "busy" : undefined;
    if (outcome) {
      closeSync(fd);
      return outcome;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}
