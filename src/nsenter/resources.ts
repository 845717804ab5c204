/**
 * The task's share of the host: the cgroups it joins, its OOM score and its
 * rlimits. Applied while the role still runs as root in the host's mount
 * namespace (cgroupfs and /proc/self are the host's), before any namespace.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { RLIM_INFINITY, setrlimit } from "../runtime/libc.ts";
import { IsolationError, must } from "./errors.ts";
import { RLIMIT_NUMBERS, type RlimitName } from "./rlimits.ts";

/**
 * Moves this process into each cgroup directory. It writes "0" (the writer
 * itself): a pid would be read in the writer's PID namespace, where this
 * process is 1 and its host pid means nothing.
 */
export function joinCgroups(dirs: readonly string[]): void {
  for (const dir of dirs) {
    try {
      writeFileSync(join(dir, "cgroup.procs"), "0");
    } catch (err) {
      throw new IsolationError(`join cgroup ${dir}: ${(err as Error).message}`);
    }
  }
}

export function setOomScoreAdj(value: number | undefined): void {
  if (value === undefined) return;
  try {
    writeFileSync("/proc/self/oom_score_adj", String(value));
  } catch (err) {
    throw new IsolationError(`set oom_score_adj ${value}: ${(err as Error).message}`);
  }
}

type RlimitValue = number | "unlimited";

export function applyRlimits(rlimits: Partial<Record<RlimitName, { soft: RlimitValue; hard: RlimitValue }>>): void {
  const value = (limit: RlimitValue) => (limit === "unlimited" ? RLIM_INFINITY : BigInt(limit));
  for (const [name, { soft, hard }] of Object.entries(rlimits) as [RlimitName, { soft: RlimitValue; hard: RlimitValue }][]) {
    must(setrlimit(RLIMIT_NUMBERS[name], value(soft), value(hard)), `set rlimit ${name} to ${soft}/${hard}`);
  }
}
