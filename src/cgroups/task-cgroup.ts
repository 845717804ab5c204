/**
 * One task's cgroup: created with its limits before the task starts, the
 * complete list of the task's processes while it runs, the way to kill all of
 * them at once, its usage figures, and removed once it is empty.
 *
 *   create(resources) ──> spawn into spawnDir ──> join(pid) (v1: other controllers)
 *        │                                             │
 *        │                         procs() / usage() while running
 *        │                                             │
 *        └──────────── empty(): kill every process, wait for none ──> remove()
 *
 * v1 and v2 differ in files, not in this life; v1.ts and v2.ts hold the files.
 */
import type { CgroupPaths } from "./paths.ts";
import type { Resources } from "./limits.ts";
import { V1TaskCgroup } from "./v1.ts";
import { V2TaskCgroup } from "./v2.ts";

/** What a cgroup measured; a field is undefined when this cgroup version or kernel does not offer it. */
export interface CgroupUsage {
  memory: {
    rss?: number;
    cache?: number;
    swap?: number;
    mappedFile?: number;
    usage?: number;
    maxUsage?: number;
    kernelUsage?: number;
    kernelMaxUsage?: number;
  };
  cpu: {
    /** CPU time of every process, in nanoseconds. */
    totalNs?: number;
    userNs?: number;
    systemNs?: number;
    throttledPeriods?: number;
    throttledNs?: number;
  };
}

export interface TaskCgroup {
  readonly paths: CgroupPaths;
  /** The directory a spawn joins before the child's first instruction; every descendant inherits it. */
  readonly spawnDir: string;
  /** Creates the directories and applies the limits; throws naming the path that failed. */
  create(resources: Resources): void;
  /** Adds `pid` (and whatever it has forked since) to the controllers beyond spawnDir. */
  join(pid: number): void;
  /** Every process in the cgroup right now. */
  procs(): number[];
  /** One round of SIGKILL for every process in the cgroup, frozen first so none can fork meanwhile. */
  killAll(): Promise<void>;
  usage(): CgroupUsage;
  /** How many processes the kernel's OOM killer killed in this cgroup. */
  oomKills(): number;
  /** Removes the (empty) directories; a directory already gone is fine. */
  remove(): void;
}

export function openTaskCgroup(paths: CgroupPaths): TaskCgroup {
  return paths.version === "v1" ? new V1TaskCgroup(paths) : new V2TaskCgroup(paths);
}

/** How often emptyCgroup() looks whether the killed processes are gone. */
const EMPTY_POLL_MS = 5;

/**
 * Kills every process in the cgroup and waits until none is left. Returns the
 * pids still there after `timeoutMs` (empty when the cgroup is empty).
 */
export async function emptyCgroup(cgroup: TaskCgroup, timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = cgroup.procs();
    if (left.length === 0 || Date.now() >= deadline) return left;
    await cgroup.killAll();
    await new Promise((resolve) => setTimeout(resolve, EMPTY_POLL_MS));
  }
}
