import { describe, expect, test } from "bun:test";
import { allocUsage } from "../../src/stats/alloc.ts";
import type { TaskResourceUsage } from "../../src/stats/task.ts";

function usage(rss: number, percent: number, measured: string[], timestamp: number): TaskResourceUsage {
  return {
    ResourceUsage: {
      MemoryStats: { RSS: rss, Cache: 1, Swap: 0, MappedFile: 0, Usage: rss * 2, MaxUsage: rss * 3, KernelUsage: 0, KernelMaxUsage: 0, Measured: measured },
      CpuStats: { SystemMode: 1, UserMode: 2, TotalTicks: 10, ThrottledPeriods: 0, ThrottledTime: 0, Percent: percent, Measured: ["Percent"] },
      DeviceStats: [],
    },
    Timestamp: timestamp,
    Pids: {},
  };
}

describe("alloc resource usage", () => {
  test("sums every task's figures, lists what any task measured, keeps each task's own", () => {
    const web = usage(100, 12.5, ["RSS", "Usage"], 5);
    const db = usage(50, 7.5, ["RSS", "Max Usage"], 9);
    const alloc = allocUsage({ web, db });
    expect(alloc.Tasks).toEqual({ web, db });
    expect(alloc.Timestamp).toBe(9);
    expect(alloc.ResourceUsage.MemoryStats).toMatchObject({ RSS: 150, Cache: 2, Usage: 300, MaxUsage: 450 });
    expect(alloc.ResourceUsage.MemoryStats.Measured).toEqual(["RSS", "Usage", "Max Usage"]);
    expect(alloc.ResourceUsage.CpuStats).toMatchObject({ SystemMode: 2, UserMode: 4, TotalTicks: 20, Percent: 20 });
  });

  test("no task sampled yet: zeros, nothing measured", () => {
    const alloc = allocUsage({});
    expect(alloc.ResourceUsage.MemoryStats.RSS).toBe(0);
    expect(alloc.ResourceUsage.MemoryStats.Measured).toEqual([]);
    expect(alloc.Timestamp).toBeGreaterThan(0);
  });
});
