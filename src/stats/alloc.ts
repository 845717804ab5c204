/**
 * An alloc's resource usage in Nomad's AllocResourceUsage shape
 * (GET /v1/client/allocation/:id/stats): every task's own figures, and their
 * sum. `Measured` of the sum lists what any task measured; its DeviceStats
 * lists each task's device groups one after the other (Nomad's naive merge:
 * one group used by two tasks appears twice).
 */
import type { ResourceUsage, TaskResourceUsage } from "./task.ts";

export interface AllocResourceUsage {
  ResourceUsage: ResourceUsage;
  Tasks: Record<string, TaskResourceUsage>;
  /** Nanoseconds since the epoch: the newest task sample's. */
  Timestamp: number;
}

function emptyUsage(): ResourceUsage {
  return {
    MemoryStats: { RSS: 0, Cache: 0, Swap: 0, MappedFile: 0, Usage: 0, MaxUsage: 0, KernelUsage: 0, KernelMaxUsage: 0, Measured: [] },
    CpuStats: { SystemMode: 0, UserMode: 0, TotalTicks: 0, ThrottledPeriods: 0, ThrottledTime: 0, Percent: 0, Measured: [] },
    DeviceStats: [],
  };
}

const union = (a: readonly string[], b: readonly string[]) => [...a, ...b.filter((item) => !a.includes(item))];

const MEMORY_FIELDS = ["RSS", "Cache", "Swap", "MappedFile", "Usage", "MaxUsage", "KernelUsage", "KernelMaxUsage"] as const;
const CPU_FIELDS = ["SystemMode", "UserMode", "TotalTicks", "ThrottledPeriods", "ThrottledTime", "Percent"] as const;

export function allocUsage(tasks: Record<string, TaskResourceUsage>): AllocResourceUsage {
  const sum = emptyUsage();
  let timestamp = 0;
  for (const task of Object.values(tasks)) {
    const { MemoryStats: memory, CpuStats: cpu } = task.ResourceUsage;
    for (const field of MEMORY_FIELDS) sum.MemoryStats[field] += memory[field];
    for (const field of CPU_FIELDS) sum.CpuStats[field] += cpu[field];
    sum.MemoryStats.Measured = union(sum.MemoryStats.Measured, memory.Measured);
    sum.CpuStats.Measured = union(sum.CpuStats.Measured, cpu.Measured);
    sum.DeviceStats = [...(sum.DeviceStats ?? []), ...(task.ResourceUsage.DeviceStats ?? [])];
    timestamp = Math.max(timestamp, task.Timestamp);
  }
  return { ResourceUsage: sum, Tasks: tasks, Timestamp: timestamp || Date.now() * 1e6 };
}
