/**
 * A task's cgroup on a v1 (legacy or hybrid) host: one directory in every
 * hierarchy the host mounts (and in a hybrid host's v2 tree). The task is
 * spawned into the memory directory, which every descendant inherits, so
 * memory's cgroup.procs is the complete kill list; the other hierarchies are
 * joined right after the spawn (an isolated task joins them all itself).
 *
 * Besides the limits: a cpuset directory gets its parent's CPUs and memory
 * nodes (v1 leaves a new one empty, and an empty cpuset takes no process),
 * and the devices controller gets an allow-list, so a task cannot open a
 * device outside it even through a device node it made.
 */
import { cgroupDirs, type CgroupPaths } from "./paths.ts";
import { cpuShares, memoryLimits, pidsMax, type Resources } from "./limits.ts";
import { ancestorsFromRoot, makeDirs, parentDir, readInteger, readKeyed, readProcs, readText, removeDir, writeOptional, writeValue } from "./files.ts";
import { DEVICE_ALLOW_LIST } from "./devices.ts";
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
    let fresh = true;
    for (const dir of cgroupDirs(this.paths)) {
      try {
        if (!makeDirs(dir)) fresh = false;
      } catch (err) {
        throw new Error(`create cgroup ${dir}: ${(err as Error).message}`);
      }
    }
    const { cpuset, devices } = this.paths.dirs;
    if (cpuset) inheritCpuset(cpuset);
    if (devices) allowDevices(devices);
    this.setLimits(resources, fresh);
  }

  join(pid: number): void {
    const memory = this.paths.dirs.memory;
    const targets = cgroupDirs(this.paths).filter((dir) => dir !== memory);
    // The task may fork while it is being moved; a child forked before its parent moved stays
    // behind, so memory's list (which every descendant inherits) is swept until nothing is new.
    const joined = new Set<number>();
    for (let pass = 0; pass < JOIN_PASSES; pass++) {
      // A Set: memory's list holds `pid` itself, and each write of a pid is a migration of its own.
      const fresh = [...new Set([pid, ...readProcs(memory)])].filter((member) => !joined.has(member));
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

  /**
   * `fresh`: every directory was made by create() just now, so each file
   * holds the kernel's default (no limit, no soft limit, pids "max") and
   * writing a default again is left out: three writes a task, each a path
   * walk, an open and a close. A directory an earlier run left gets every value.
   */
  private setLimits(resources: Resources, fresh: boolean): void {
    const { memory, cpu, pids } = this.paths.dirs;
    const { limitBytes, softBytes } = memoryLimits(resources);
    const limit = limitBytes ?? UNLIMITED;
    // memsw must stay >= the limit at every step: lift it, set the limit, then pin it.
    if (!fresh) writeOptional(memory, "memory.memsw.limit_in_bytes", UNLIMITED);
    writeValue(memory, "memory.limit_in_bytes", limit);
    writeOptional(memory, "memory.memsw.limit_in_bytes", limit);
    if (!fresh || softBytes !== null) writeValue(memory, "memory.soft_limit_in_bytes", softBytes ?? UNLIMITED);
    const shares = cpuShares(resources);
    if (cpu && shares !== null) writeValue(cpu, "cpu.shares", shares);
    const maxPids = pidsMax(resources);
    if (pids && (!fresh || maxPids !== "max")) writeValue(pids, "pids.max", maxPids);
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

/**
 * Gives `dir` and each ancestor below the hierarchy's root that has none the
 * CPUs and memory nodes of its parent, top down.
 */
function inheritCpuset(dir: string): void {
  // The root's own cpuset is the whole machine's, never empty.
  for (const at of ancestorsFromRoot(dir, "cpuset.cpus").slice(1)) {
    for (const file of ["cpuset.cpus", "cpuset.mems"]) {
      if (readText(at, file)?.trim()) continue;
      writeValue(at, file, readText(parentDir(at), file)?.trim() ?? "");
    }
  }
}

/** Denies every device, then allows the list (v1 devices.deny / devices.allow). */
function allowDevices(dir: string): void {
  writeValue(dir, "devices.deny", "a");
  for (const rule of DEVICE_ALLOW_LIST) writeValue(dir, "devices.allow", rule);
}

async function freeze(freezer: string): Promise<void> {
  if (!writeOptional(freezer, "freezer.state", "FROZEN")) return;
  // FREEZING until every task has stopped.
  await settleFreeze(() => readText(freezer, "freezer.state")?.trim() === "FROZEN");
}


function ticksToNs(ticks: number | undefined): number | undefined {
  return ticks === undefined ? undefined : ticks * NS_PER_USER_HZ_TICK;
}
