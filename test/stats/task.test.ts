import { describe, expect, test } from "bun:test";
import type { CgroupUsage, TaskCgroup } from "../../src/cgroups/task-cgroup.ts";
import { TaskStatsSampler } from "../../src/stats/task.ts";

/** A cgroup whose readings the test sets. */
function fakeCgroup(usage: CgroupUsage): TaskCgroup & { usage(): CgroupUsage; set(next: CgroupUsage): void } {
  let current = usage;
  return {
    paths: { version: "v2", dir: "/fake" },
    spawnDir: "/fake",
    create() {},
    join() {},
    procs: () => [],
    killAll: async () => {},
    usage: () => current,
    oomKills: () => 0,
    remove() {},
    set(next) {
      current = next;
    },
  };
}

const SECOND_NS = 1e9;

describe("task stats", () => {
  test("Measured names only what the cgroup measured, in Nomad's words", () => {
    const cgroup = fakeCgroup({ memory: { rss: 10, cache: 20, usage: 30, maxUsage: 40 }, cpu: { totalNs: 0, userNs: 0, systemNs: 0 } });
    const sample = new TaskStatsSampler({ cgroup, pids: () => [], mhzPerCore: 2000 }).sample();
    expect(sample.ResourceUsage.MemoryStats).toEqual({
      RSS: 10,
      Cache: 20,
      Swap: 0,
      MappedFile: 0,
      Usage: 30,
      MaxUsage: 40,
      KernelUsage: 0,
      KernelMaxUsage: 0,
      Measured: ["RSS", "Cache", "Usage", "Max Usage"],
    });
    expect(sample.ResourceUsage.CpuStats.Measured).toEqual(["System Mode", "User Mode", "Percent"]);
    expect(sample.ResourceUsage.DeviceStats).toEqual([]);
  });

  test("CPU percent is CPU time over wall time since the previous sample; TotalTicks is that share in MHz", () => {
    const cgroup = fakeCgroup({ memory: {}, cpu: { totalNs: 0, userNs: 0, systemNs: 0, throttledPeriods: 0, throttledNs: 0 } });
    const sampler = new TaskStatsSampler({ cgroup, pids: () => [], mhzPerCore: 2000 });
    sampler.sample(0);
    // 1.5 s of CPU (1.2 user, 0.3 system) in 1 s of wall time: one and a half cores.
    cgroup.set({ memory: {}, cpu: { totalNs: 1.5 * SECOND_NS, userNs: 1.2 * SECOND_NS, systemNs: 0.3 * SECOND_NS, throttledPeriods: 4, throttledNs: 500 } });
    const cpu = sampler.sample(SECOND_NS).ResourceUsage.CpuStats;
    expect(cpu.Percent).toBeCloseTo(150);
    expect(cpu.UserMode).toBeCloseTo(120);
    expect(cpu.SystemMode).toBeCloseTo(30);
    expect(cpu.TotalTicks).toBeCloseTo(3000);
    expect(cpu.ThrottledPeriods).toBe(4);
    expect(cpu.ThrottledTime).toBe(500);
    expect(cpu.Measured).toEqual(["System Mode", "User Mode", "Throttled Periods", "Throttled Time", "Percent"]);
  });

  test("without a cgroup, the task is the sum of its processes, each also listed under Pids", () => {
    const sampler = new TaskStatsSampler({ cgroup: null, pids: () => [process.pid], mhzPerCore: 1000 });
    const sample = sampler.sample();
    const own = sample.Pids[String(process.pid)]!;
    expect(own.MemoryStats.RSS).toBeGreaterThan(1_000_000);
    expect(own.MemoryStats.Measured).toEqual(["RSS", "Swap"]);
    expect(own.DeviceStats).toBeNull();
    expect(sample.ResourceUsage.MemoryStats.RSS).toBe(own.MemoryStats.RSS);
    expect(sample.ResourceUsage.MemoryStats.Measured).toEqual(["RSS", "Swap"]);
  });
});
