/**
 * A task's cgroup on a v1 (legacy or hybrid) host: one directory per
 * controller. The task is spawned into the memory directory, which every
 * descendant inherits, so memory's cgroup.procs is the complete kill list;
 * the other controllers are joined right after the spawn.
 */
import { cgroupDirs, type CgroupPaths } from "./paths.ts";
import { cpuShares, memoryLimits, type Resources } from "./limits.ts";
import { makeDirs, readInteger, readKeyed, readProcs, readText, removeDir, writeOptional, writeValue } from "./files.ts";
import { settleFreeze, signalEach } from "./signal.ts";
import type { CgroupUsage, TaskCgroup } from "./task-cgroup.ts";
import { NS_PER_USER_HZ_TICK } from "../lib/units.ts";

type V1Paths = Extract<CgroupPaths, { version: "v1" }>;

/** Sweeps of memory's member list when joining the other controllers; forks settle within a couple. */
const JOIN_PASSES = 4;

/** memory.limit_in_bytes value meaning "no limit". */
const UNLIMITED = -1;

export class V1TaskCgroup implements TaskCgroup {
  readonly spawnDir: string;

  constructor(readonly paths: V1Paths) {
    this.spawnDir = paths.dirs.memory;
  }

  create(resources: Resources): void {
    for (const dir of cgroupDirs(this.paths)) {
      try {
        makeDirs(dir);
      } catch (err) {
        throw new Error(`create cgroup ${dir}: ${(err as Error).message}`);
      }
    }
    this.setLimits(resources);
  }

  join(pid: number): void {
    const { memory, ...others } = this.paths.dirs;
    const targets = [...new Set(Object.values(others).filter((dir): dir is string => dir !== undefined && dir !== memory))];
    // The task may fork while it is being moved; a child forked before its parent moved stays
    // behind, so memory's list (which every descendant inherits) is swept until nothing is new.
    const joined = new Set<number>();
    for (let pass = 0; pass < JOIN_PASSES; pass++) {
      const fresh = [pid, ...readProcs(memory)].filter((member) => !joined.has(member));
      if (fresh.length === 0) return;
      for (const member of fresh) {
        joined.add(member);
        for (const dir of targets) {
          try {
            writeValue(dir, "cgroup.procs", member);
          } catch (err) {
            // A member that exited meanwhile cannot join; the task itself must.
            if (member === pid && readProcs(memory).includes(pid)) throw err;
          }
        }
      }
    }
  }

  private setLimits(resources: Resources): void {
    const { memory, cpu, pids } = this.paths.dirs;
    const { limitBytes, softBytes } = memoryLimits(resources);
    const limit = limitBytes ?? UNLIMITED;
    // memsw must stay >= the limit at every step: lift it, set the limit, then pin it.
    writeOptional(memory, "memory.memsw.limit_in_bytes", UNLIMITED);
    writeValue(memory, "memory.limit_in_bytes", limit);
    writeOptional(memory, "memory.memsw.limit_in_bytes", limit);
    writeValue(memory, "memory.soft_limit_in_bytes", softBytes ?? UNLIMITED);
    const shares = cpuShares(resources);
    if (cpu && shares !== null) writeValue(cpu, "cpu.shares", shares);
    if (pids) writeValue(pids, "pids.max", resources.pidsLimit > 0 ? resources.pidsLimit : "max");
  }

  procs(): number[] {
    return readProcs(this.paths.dirs.memory);
  }

  async killAll(): Promise<void> {
    const freezer = this.paths.dirs.freezer;
    // Without a settled freeze the kill still goes ahead; empty() repeats it for late forks.
    if (freezer !== undefined) await freeze(freezer);
    try {
      signalEach(this.procs(), "SIGKILL");
    } finally {
      if (freezer !== undefined) writeOptional(freezer, "freezer.state", "THAWED");
    }
  }

  usage(): CgroupUsage {
    const { memory, cpu, cpuacct } = this.paths.dirs;
    const stat = readKeyed(memory, "memory.stat");
    const user = cpuacct ? readInteger(cpuacct, "cpuacct.usage_user") : undefined;
    const system = cpuacct ? readInteger(cpuacct, "cpuacct.usage_sys") : undefined;
    const ticks = cpuacct && (user === undefined || system === undefined) ? readKeyed(cpuacct, "cpuacct.stat") : undefined;
    const throttling = cpu ? readKeyed(cpu, "cpu.stat") : undefined;
    return {
      memory: {
        rss: stat?.get("total_rss"),
        cache: stat?.get("total_cache"),
        swap: stat?.get("total_swap"),
        mappedFile: stat?.get("total_mapped_file"),
        usage: readInteger(memory, "memory.usage_in_bytes"),
        maxUsage: readInteger(memory, "memory.max_usage_in_bytes"),
        kernelUsage: readInteger(memory, "memory.kmem.usage_in_bytes"),
        kernelMaxUsage: readInteger(memory, "memory.kmem.max_usage_in_bytes"),
      },
      cpu: {
        totalNs: cpuacct ? readInteger(cpuacct, "cpuacct.usage") : undefined,
        userNs: user ?? ticksToNs(ticks?.get("user")),
        systemNs: system ?? ticksToNs(ticks?.get("system")),
        throttledPeriods: throttling?.get("nr_throttled"),
        throttledNs: throttling?.get("throttled_time"),
      },
    };
  }

  oomKills(): number {
    return readKeyed(this.paths.dirs.memory, "memory.oom_control")?.get("oom_kill") ?? 0;
  }

  remove(): void {
    for (const dir of cgroupDirs(this.paths)) removeDir(dir);
  }
}

async function freeze(freezer: string): Promise<void> {
  if (!writeOptional(freezer, "freezer.state", "FROZEN")) return;
  // FREEZING until every task has stopped.
  await settleFreeze(() => readText(freezer, "freezer.state")?.trim() === "FROZEN");
}


function ticksToNs(ticks: number | undefined): number | undefined {
  return ticks === undefined ? undefined : ticks * NS_PER_USER_HZ_TICK;
}
