/**
 * After an isolated task is gone. The role mounts nothing in the host's mount
 * namespace: every mount it makes lives in the task's own namespace, which the
 * kernel tears down when its last process exits, before the executor's wait
 * returns (PID 1's exit first kills and reaps every other process of its PID
 * namespace). So the host's mount table is already as it was.
 *
 * cleanupIsolation is the guard the executor runs anyway once the task has
 * exited: anything still mounted under the task dir in the host namespace is
 * a leak (from a bug, or a process someone entered into the namespace by
 * hand), and is detached so that deleting the task dir never fails with
 * "device busy" nor walks into host files. The secrets tmpfs the alloc dir
 * mounts on the host on purpose is left alone; AllocDir.destroy removes it.
 */
import { detachMountsUnder } from "../lib/mounts.ts";

/** Detaches leftover host mounts under `taskDir` (except its secrets tmpfs); returns what it detached. */
export function cleanupIsolation(taskDir: string): string[] {
  return detachMountsUnder(taskDir, [`${taskDir}/secrets`]);
}
