import { describe, expect, test } from "bun:test";
import { cpus } from "node:os";
import { cpuPercentages, HostStatsCollector, parseProcStat } from "../../src/stats/host.ts";
import { tempDir } from "../helpers/index.ts";

describe("host stats", () => {
  test("per-core percentages come from the difference of two readings", () => {
    const before = parseProcStat("cpu  1 1 1 1\ncpu0 100 0 50 800 50 0 0 0 0 0\n");
    const after = parseProcStat("cpu  2 2 2 2\ncpu0 130 10 60 880 60 5 5 0 0 0\n");
    // 200 jiffies passed: user+nice 40, system+irq+softirq 20, idle+iowait 90 (and steal 0).
    const [core] = cpuPercentages(before, after);
    expect(core!.CPU).toBe("cpu0");
    expect(core!.User).toBeCloseTo((40 / 150) * 100);
    expect(core!.System).toBeCloseTo((20 / 150) * 100);
    expect(core!.Idle).toBeCloseTo((90 / 150) * 100);
    expect(core!.Total).toBeCloseTo(100 - (90 / 150) * 100);
  });

  test("a sample has Nomad's HostStats fields with this host's figures", () => {
    const collector = new HostStatsCollector(tempDir(), 2000);
    const stats = collector.sample();
    expect(stats.CPU.map((c) => c.CPU)).toEqual(cpus().map((_, i) => `cpu${i}`));
    expect(stats.Memory.Total).toBeGreaterThan(0);
    expect(stats.Memory.Free).toBeLessThanOrEqual(stats.Memory.Total);
    expect(stats.Memory.Available).toBeLessThanOrEqual(stats.Memory.Total);
    expect(stats.Memory.Used).toBeGreaterThan(0);
    expect(stats.AllocDirStats!.Size).toBeGreaterThan(0);
    expect(stats.AllocDirStats!.UsedPercent).toBeGreaterThan(0);
    expect(stats.DiskStats.length).toBeGreaterThan(0);
    expect(stats.DiskStats[0]!.Device).toStartWith("/dev/");
    expect(stats.Uptime).toBeGreaterThan(0);
    expect(Math.abs(stats.Timestamp / 1e6 - Date.now())).toBeLessThan(60_000);
    expect(collector.latest()).toBe(stats);
  });
});
