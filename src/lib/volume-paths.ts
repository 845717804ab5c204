/**
 * Where a task's `volume_mount { destination }` lands: a path inside the
 * task's root, the same for every driver. An exec task's root is its chroot,
 * so "/srv/data" is /srv/data there; a raw_exec task's root is its task dir
 * on the host, so the same destination is <task dir>/srv/data (a relative
 * destination, "local/data", is read from the root too). The host's own
 * /srv/data is never touched.
 */
import { posix } from "node:path";

/** The task's own directories: a volume may go below /alloc, /local and /tmp, but not on them. */
const TASK_DIRS = ["/alloc", "/local", "/tmp"];
/** Kernel file systems and the secrets tmpfs: nothing is bound on or below these. */
const NOTHING_BELOW = ["/dev", "/proc", "/secrets"];

/** `path` is `parent` or below it (both normalized and absolute). */
export function isUnder(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`);
}

/** The destination as a path inside the task's root ("local/data" -> "/local/data"), or why it cannot be one. */
export function volumeTaskPath(destination: string): { path: string } | { problem: string } {
  if (destination.includes("\0")) return { problem: "must not contain NUL" };
  if (destination.split("/").includes("..")) return { problem: 'must not contain ".." components' };
  const path = posix.normalize(`/${destination}`).replace(/(.)\/$/, "$1");
  if (path === "/") return { problem: "must not be the task's root" };
  if (TASK_DIRS.includes(path)) return { problem: `must not be ${path} itself (a path below it is fine)` };
  const forbidden = NOTHING_BELOW.find((parent) => isUnder(path, parent));
  if (forbidden) return { problem: `must not be on or under ${forbidden}` };
  return { path };
}
