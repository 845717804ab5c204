/**
 * A task's resources (Nomad's `resources` block) and the cgroup values they
 * become. Nomad's conventions: CPU MHz are v1 cpu.shares as they stand
 * (converted to a v2 weight the way runc does), MemoryMB is the limit unless
 * MemoryMaxMB raises it (then MemoryMB is the soft limit / memory.low), and
 * swap never extends the limit.
 */
import * as v from "valibot";
import { BYTES_PER_MIB } from "../lib/units.ts";

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const ResourcesSchema = v.object({
  /** CPU share in MHz; 0 leaves the kernel's default weight. */
  cpuMhz: Count,
  /** Memory reservation in MiB; 0 means no limit. */
  memoryMb: Count,
  /** Hard memory limit in MiB when above memoryMb (Nomad's memory_max); 0 = memoryMb is the limit. */
  memoryMaxMb: v.optional(Count, 0),
  /** Most processes (threads included) the task may have at once; 0 = no limit. */
  pidsLimit: v.optional(Count, 0),
});
export type Resources = v.InferOutput<typeof ResourcesSchema>;

/** pids.max for the task: the limit, or "max" for none. */
export function pidsMax(resources: Resources): number | "max" {
  return resources.pidsLimit > 0 ? resources.pidsLimit : "max";
}

/** v1 cpu.shares has a floor of 2; the kernel rejects less. */
const MIN_CPU_SHARES = 2;
/** v1 cpu.shares ceiling (kernel MAX_SHARES), the top of runc's conversion range. */
const MAX_CPU_SHARES = 262_144;

export interface MemoryLimits {
  /** Hard limit in bytes, or null for none. */
  limitBytes: number | null;
  /** Soft limit / protected amount in bytes when memory_max raises the hard limit, else null. */
  softBytes: number | null;
}

export function memoryLimits(resources: Resources): MemoryLimits {
  const hardMb = Math.max(resources.memoryMb, resources.memoryMaxMb);
  return {
    limitBytes: hardMb > 0 ? hardMb * BYTES_PER_MIB : null,
    softBytes: resources.memoryMaxMb > resources.memoryMb && resources.memoryMb > 0 ? resources.memoryMb * BYTES_PER_MIB : null,
  };
}

/** v1 cpu.shares for the task, or null to keep the default. */
export function cpuShares(resources: Resources): number | null {
  if (resources.cpuMhz <= 0) return null;
  return Math.min(MAX_CPU_SHARES, Math.max(MIN_CPU_SHARES, resources.cpuMhz));
}

/** v2 cpu.weight (1..10000) from v1 shares (2..262144), runc's linear mapping. */
export function sharesToWeight(shares: number): number {
  return 1 + Math.floor(((shares - MIN_CPU_SHARES) * 9999) / (MAX_CPU_SHARES - MIN_CPU_SHARES));
}
