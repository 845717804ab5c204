/**
 * One process's memory and CPU time from /proc, for the per-pid part of a
 * task's stats and for tasks that run without a cgroup. Read through libc
 * calls: the per-task executor uses this, and node:fs would cost it ~0.5 MiB.
 */
import { readTextFile, sysReaddir } from "../runtime/libc.ts";
import { NS_PER_USER_HZ_TICK } from "../lib/units.ts";

export interface ProcessUsage {
  rss: number;
  swap: number;
  userNs: number;
  systemNs: number;
}


/** Fields of /proc/PID/stat after the command name, which may itself hold spaces and ")". */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** The process's start time in ticks since boot (field 22): with the pid, it names one process for good. */
export function processStartTime(pid: number): number | null {
  return liveStat(pid)?.startTime ?? null;
}

/** The start time of `pid` even when it is a zombie (exited, not reaped yet): a reaper names what it reaps by it. */
export function anyStartTime(pid: number): number | null {
  try {
    return Number(statFields(readTextFile(`/proc/${pid}/stat`))[19]);
  } catch {
    return null;
  }
}

/** The parent of a process that has not exited, or null. */
export function parentOf(pid: number): number | null {
  return liveStat(pid)?.parent ?? null;
}

export interface LiveStat {
  state: string;
  parent: number;
  group: number;
  startTime: number;
}

/** State letter, parent, process group and start time of a process that has not exited (a zombie counts as exited), or null. */
export function liveStat(pid: number): LiveStat | null {
  try {
    const fields = statFields(readTextFile(`/proc/${pid}/stat`));
    if (fields[0] === "Z") return null;
    return { state: fields[0]!, parent: Number(fields[1]), group: Number(fields[2]), startTime: Number(fields[19]) };
  } catch {
    return null;
  }
}

/** True while `pid` runs (not a zombie); with `startTime`, only while it is still that same process. */
export function isAlive(pid: number, startTime?: number): boolean {
  const stat = liveStat(pid);
  return stat !== null && (startTime === undefined || stat.startTime === startTime);
}

function statusKiB(status: string, key: string): number {
  const match = new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/** The process's usage, or null when it is gone. */
export function readProcessUsage(pid: number): ProcessUsage | null {
  try {
    const fields = statFields(readTextFile(`/proc/${pid}/stat`));
    const status = readTextFile(`/proc/${pid}/status`);
    return {
      rss: statusKiB(status, "VmRSS"),
      swap: statusKiB(status, "VmSwap"),
      // utime and stime are fields 14 and 15 of the whole line.
      userNs: Number(fields[11]) * NS_PER_USER_HZ_TICK,
      systemNs: Number(fields[12]) * NS_PER_USER_HZ_TICK,
    };
  } catch {
    return null;
  }
}

/** Every descendant of `pid` (children of all its threads, recursively). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let threads: string[];
    try {
      threads = sysReaddir(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const tid of threads) {
      let children = "";
      try {
        children = readTextFile(`/proc/${parent}/task/${tid}/children`);
      } catch {
        continue;
      }
      for (const child of children.split(" ").filter(Boolean).map(Number)) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}
