/**
 * The task's processes when it has no cgroup: its process group and every
 * descendant of the executor (as subreaper, the executor inherits the task's
 * orphans, so its descendants are the task's whole tree, double forks and
 * setsid included).
 */
import { descendants, isAlive, liveStat } from "../stats/process.ts";
import { signalEach } from "../cgroups/signal.ts";

/** How often emptyTree() looks whether the killed processes are gone. */
const EMPTY_POLL_MS = 5;

/** The executor's live descendants: the task tree (and any exec command running in it). */
export function treeProcesses(): number[] {
  return descendants(process.pid).filter((pid) => isAlive(pid));
}

/**
 * SIGKILLs process group `pgid` at once (no fork slips out between pids), but
 * only while a live process of the executor's tree is in it: once a group has
 * no members left, its number is a free pid that may name another process.
 */
export function killGroup(pgid: number, tree: readonly number[] = treeProcesses()): void {
  if (tree.some((pid) => liveStat(pid)?.group === pgid)) signalEach([-pgid], "SIGKILL");
}

/**
 * SIGKILLs the process group and every process of `tree` (the executor's
 * descendants unless told) until none is left or `timeoutMs` passes; returns those left.
 */
export async function emptyTree(pgid: number, timeoutMs: number, tree: () => number[] = treeProcesses): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = tree();
    if (left.length === 0 || Date.now() >= deadline) return left;
    killGroup(pgid, left);
    signalEach(left, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, EMPTY_POLL_MS));
  }
}
