/**
 * A task's cgroup on a v2 (unified) host: one leaf under a parent slice. A
 * leaf has the controllers enabled in every ancestor's cgroup.subtree_control,
 * so create() enables every controller the host offers from the mount down:
 * the task is then in each of them (cpu, memory, pids, io, cpuset, ...), below
 * the host's root. The parent slice holds no processes itself (v2's
 * no-internal-process rule). v2 has no devices file: an exec task's device
 * allow-list is a device program its isolation attaches (device-filter.ts).
 */
import type { CgroupPaths } from "./paths.ts";
import { cpuShares, memoryLimits, pidsMax, sharesToWeight, type Resources } from "./limits.ts";
import { ancestorsFromRoot, makeDirs, parentDir, readInteger, readKeyed, readProcs, readText, removeDir, writeOptional, writeValue } from "./files.ts";
import { settleFreeze, signalEach } from "./signal.ts";
import type { CgroupUsage, TaskCgroup } from "./task-cgroup.ts";

type V2Paths = Extract<CgroupPaths, { version: "v2" }>;

/** The controllers setLimits writes to; the others are enabled for placement alone. */
const LIMITED: readonly string[] = ["cpu", "memory", "pids"];

export class V2TaskCgroup implements TaskCgroup {
  readonly spawnDir: string;

  constructor(readonly paths: V2Paths) {
    this.spawnDir = paths.dir;
  }

  create(resources: Resources): void {
    const parent = parentDir(this.paths.dir);
    try {
      makeDirs(parent);
      enableControllers(parent);
      makeDirs(this.paths.dir);
    } catch (err) {
      throw new Error(`create cgroup ${this.paths.dir}: ${(err as Error).message}`);
    }
    this.setLimits(resources);
  }

  /** Everything lives in one directory, which the spawn already joined. */
  join(): void {}

  private setLimits(resources: Resources): void {
    const dir = this.paths.dir;
    const { limitBytes, softBytes } = memoryLimits(resources);
    writeValue(dir, "memory.max", limitBytes ?? "max");
    writeOptional(dir, "memory.low", softBytes ?? 0);
    // No swap on top of the limit, as on v1 (memsw = limit).
    writeOptional(dir, "memory.swap.max", limitBytes === null ? "max" : 0);
    const shares = cpuShares(resources);
    if (shares !== null) writeOptional(dir, "cpu.weight", sharesToWeight(shares));
    writeOptional(dir, "pids.max", pidsMax(resources));
  }

  procs(): number[] {
    return readProcs(this.paths.dir);
  }

  async killAll(): Promise<void> {
    const dir = this.paths.dir;
    // cgroup.kill (5.14+) kills the whole subtree atomically, forks included.
    if (writeOptional(dir, "cgroup.kill", 1)) return;
    // Without it (before 5.14), freeze first so that nothing forks between listing and killing.
    const frozen = writeOptional(dir, "cgroup.freeze", 1);
    try {
      if (frozen) await settleFreeze(() => readKeyed(dir, "cgroup.events")?.get("frozen") === 1);
      signalEach(this.procs(), "SIGKILL");
    } finally {
      if (frozen) writeOptional(dir, "cgroup.freeze", 0);
    }
  }

  usage(): CgroupUsage {
    const dir = this.paths.dir;
    const stat = readKeyed(dir, "memory.stat");
    const cpu = readKeyed(dir, "cpu.stat");
    const usec = (key: string) => {
      const value = cpu?.get(key);
      return value === undefined ? undefined : value * 1_000;
    };
    return {
      memory: {
        rss: stat?.get("anon"),
        cache: stat?.get("file"),
        swap: readInteger(dir, "memory.swap.current"),
        mappedFile: stat?.get("file_mapped"),
        usage: readInteger(dir, "memory.current"),
        maxUsage: readInteger(dir, "memory.peak"),
        kernelUsage: stat?.get("kernel"),
      },
      cpu: {
        totalNs: usec("usage_usec"),
        userNs: usec("user_usec"),
        systemNs: usec("system_usec"),
        throttledPeriods: cpu?.get("nr_throttled"),
        throttledNs: usec("throttled_usec"),
      },
    };
  }

  oomKills(): number {
    return readKeyed(this.paths.dir, "memory.events")?.get("oom_kill") ?? 0;
  }

  remove(): void {
    removeDir(this.paths.dir);
  }
}

/**
 * Enables every offered controller in the subtree_control of every ancestor from
 * the mount (the first directory with cgroup.controllers but no parent
 * offering it) down to `parent`.
 */
function enableControllers(parent: string): void {
  for (const dir of ancestorsFromRoot(parent, "cgroup.controllers")) {
    const offered = (readText(dir, "cgroup.controllers") ?? "").trim().split(/\s+/).filter(Boolean);
    const enabled = new Set((readText(dir, "cgroup.subtree_control") ?? "").trim().split(/\s+/));
    const wanted = offered.filter((controller) => !enabled.has(controller));
    if (wanted.length === 0 || writeOptional(dir, "cgroup.subtree_control", wanted.map((controller) => `+${controller}`).join(" "))) continue;
    // One the kernel refuses here must not keep the task from the rest; the ones limits need must succeed.
    for (const controller of wanted) {
      if (!writeOptional(dir, "cgroup.subtree_control", `+${controller}`) && LIMITED.includes(controller)) writeValue(dir, "cgroup.subtree_control", `+${controller}`);
    }
  }
}
