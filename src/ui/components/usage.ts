/** Reading CPU and memory use from Nomad's ResourceUsage the way Nomad's UI does. */
import type { AllocStats } from "../api/shapes.ts";

type Usage = NonNullable<AllocStats["ResourceUsage"]>;

/** MHz in use. */
export function cpuMhz(usage: Usage | null | undefined): number {
  return usage?.CpuStats?.TotalTicks ?? 0;
}

/** Bytes in use: RSS where the agent measured it, else the cgroup's usage. */
export function memoryBytes(usage: Usage | null | undefined): number {
  const memory = usage?.MemoryStats;
  if (!memory) return 0;
  return memory.Measured.includes("RSS") && (memory.RSS ?? 0) > 0 ? (memory.RSS ?? 0) : (memory.Usage ?? 0);
}

export const MIB = 1024 * 1024;
