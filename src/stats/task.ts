/**
 * A task's resource usage in Nomad's TaskResourceUsage shape (the `Tasks.<name>`
 * entries of GET /v1/client/allocation/:id/stats): the whole task from its
 * cgroup, and each of its processes from /proc. `Measured` names only what
 * this host really measured, so a dashboard can tell "0" from "unknown".
 *
 * CPU percentages are deltas: CPU time used since the previous sample over the
 * wall time since then (100 = one core busy). The sampler keeps the previous
 * reading; the first sample has none and reports 0 %, as Nomad's does (taking
 * a baseline at launch would put ~1 ms of /proc reads in every launch).
 */
import * as v from "valibot";
import type { CgroupUsage, TaskCgroup } from "../cgroups/task-cgroup.ts";
import { readProcessUsage, type ProcessUsage } from "./process.ts";

const Bytes = v.number();

export const MemoryStatsSchema = v.object({
  RSS: Bytes,
  Cache: Bytes,
  Swap: Bytes,
  MappedFile: Bytes,
  Usage: Bytes,
  MaxUsage: Bytes,
  KernelUsage: Bytes,
  KernelMaxUsage: Bytes,
  Measured: v.array(v.string()),
});

export const CpuStatsSchema = v.object({
  SystemMode: v.number(),
  UserMode: v.number(),
  TotalTicks: v.number(),
  ThrottledPeriods: v.number(),
  ThrottledTime: v.number(),
  Percent: v.number(),
  Measured: v.array(v.string()),
});

export const ResourceUsageSchema = v.object({
  MemoryStats: MemoryStatsSchema,
  CpuStats: CpuStatsSchema,
  DeviceStats: v.nullable(v.array(v.unknown())),
});

export const TaskResourceUsageSchema = v.object({
  ResourceUsage: ResourceUsageSchema,
  /** Nanoseconds since the epoch. */
  Timestamp: v.number(),
  Pids: v.record(v.string(), ResourceUsageSchema),
});

export type MemoryStats = v.InferOutput<typeof MemoryStatsSchema>;
export type CpuStats = v.InferOutput<typeof CpuStatsSchema>;
export type ResourceUsage = v.InferOutput<typeof ResourceUsageSchema>;
export type TaskResourceUsage = v.InferOutput<typeof TaskResourceUsageSchema>;

/** Nomad's names for each measured field, in Nomad's order. */
const MEMORY_MEASURES = [
  ["rss", "RSS"],
  ["cache", "Cache"],
  ["swap", "Swap"],
  ["mappedFile", "Mapped File"],
  ["usage", "Usage"],
  ["maxUsage", "Max Usage"],
  ["kernelUsage", "Kernel Usage"],
  ["kernelMaxUsage", "Kernel Max Usage"],
] as const;

/** A process's figures from /proc: what Nomad measures per pid. */
const PROCESS_MEMORY_MEASURED = ["RSS", "Swap"];
const PROCESS_CPU_MEASURED = ["System Mode", "User Mode", "Percent"];

interface CpuReading {
  totalNs: number;
  userNs: number;
  systemNs: number;
  atNs: number;
}

export interface TaskStatsSource {
  /** The task's cgroup; without one the task's figures are the sum of its processes'. */
  cgroup: TaskCgroup | null;
  /** The task's processes right now. */
  pids(): number[];
  /** MHz of one core: TotalTicks is the CPU share in MHz, as Nomad reports it. */
  mhzPerCore: number;
}

export class TaskStatsSampler {
  private previousTask: CpuReading | null = null;
  private previousPids = new Map<number, CpuReading>();

  constructor(private readonly source: TaskStatsSource) {}

  sample(nowNs = Date.now() * 1e6): TaskResourceUsage {
    const pids = this.source.pids();
    const processes = new Map<number, ProcessUsage>();
    for (const pid of pids) {
      const usage = readProcessUsage(pid);
      if (usage) processes.set(pid, usage);
    }

    const nextPids = new Map<number, CpuReading>();
    const Pids: Record<string, ResourceUsage> = {};
    for (const [pid, usage] of processes) {
      const reading = { totalNs: usage.userNs + usage.systemNs, userNs: usage.userNs, systemNs: usage.systemNs, atNs: nowNs };
      nextPids.set(pid, reading);
      Pids[String(pid)] = {
        MemoryStats: { ...memoryStats({ rss: usage.rss, swap: usage.swap }), Measured: PROCESS_MEMORY_MEASURED },
        CpuStats: this.cpuStats(reading, this.previousPids.get(pid) ?? null, PROCESS_CPU_MEASURED, 0, 0),
        DeviceStats: null,
      };
    }
    this.previousPids = nextPids;

    return { ResourceUsage: this.taskUsage(processes, nowNs), Timestamp: nowNs, Pids };
  }

  private taskUsage(processes: Map<number, ProcessUsage>, nowNs: number): ResourceUsage {
    const usage = this.source.cgroup?.usage() ?? sumProcesses(processes);
    const cpu = usage.cpu;
    const reading: CpuReading = { totalNs: cpu.totalNs ?? 0, userNs: cpu.userNs ?? 0, systemNs: cpu.systemNs ?? 0, atNs: nowNs };
    const measuredCpu = [
      cpu.systemNs !== undefined && "System Mode",
      cpu.userNs !== undefined && "User Mode",
      cpu.throttledPeriods !== undefined && "Throttled Periods",
      cpu.throttledNs !== undefined && "Throttled Time",
      cpu.totalNs !== undefined && "Percent",
    ].filter((name): name is string => name !== false);
    const previous = this.previousTask;
    this.previousTask = reading;
    return {
      MemoryStats: {
        ...memoryStats(usage.memory),
        Measured: MEMORY_MEASURES.filter(([key]) => usage.memory[key] !== undefined).map(([, name]) => name),
      },
      CpuStats: this.cpuStats(reading, previous, measuredCpu, cpu.throttledPeriods ?? 0, cpu.throttledNs ?? 0),
      DeviceStats: [],
    };
  }

  private cpuStats(now: CpuReading, before: CpuReading | null, measured: string[], throttledPeriods: number, throttledNs: number): CpuStats {
    const wallNs = before ? now.atNs - before.atNs : 0;
    // A process that exited between samples takes its CPU time with it; never report a negative share.
    const percentOf = (after: number, then: number) => (wallNs > 0 ? Math.max(0, ((after - then) / wallNs) * 100) : 0);
    const percent = before ? percentOf(now.totalNs, before.totalNs) : 0;
    return {
      SystemMode: before ? percentOf(now.systemNs, before.systemNs) : 0,
      UserMode: before ? percentOf(now.userNs, before.userNs) : 0,
      TotalTicks: (percent / 100) * this.source.mhzPerCore,
      ThrottledPeriods: throttledPeriods,
      ThrottledTime: throttledNs,
      Percent: percent,
      Measured: measured,
    };
  }
}

function memoryStats(memory: CgroupUsage["memory"]): Omit<MemoryStats, "Measured"> {
  return {
    RSS: memory.rss ?? 0,
    Cache: memory.cache ?? 0,
    Swap: memory.swap ?? 0,
    MappedFile: memory.mappedFile ?? 0,
    Usage: memory.usage ?? 0,
    MaxUsage: memory.maxUsage ?? 0,
    KernelUsage: memory.kernelUsage ?? 0,
    KernelMaxUsage: memory.kernelMaxUsage ?? 0,
  };
}

/** A task without a cgroup: its figures are the sum of its live processes' (what Nomad's raw_exec reports). */
function sumProcesses(processes: Map<number, ProcessUsage>): CgroupUsage {
  let rss = 0;
  let swap = 0;
  let userNs = 0;
  let systemNs = 0;
  for (const usage of processes.values()) {
    rss += usage.rss;
    swap += usage.swap;
    userNs += usage.userNs;
    systemNs += usage.systemNs;
  }
  return { memory: { rss, swap }, cpu: { totalNs: userNs + systemNs, userNs, systemNs } };
}
