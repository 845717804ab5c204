import { describe, expect, test } from "bun:test";
import { AllocGarbageCollector, type GcUsage } from "../../src/client/gc.ts";

function setup(maxAllocs = 3) {
  const usage: GcUsage = { diskUsedPercent: 10, inodesUsedPercent: 10, availableBytes: 10 * 2 ** 30 };
  const destroyed: string[] = [];
  const gc = new AllocGarbageCollector({ maxAllocs, diskUsageThreshold: 80, inodeUsageThreshold: 70 }, () => usage);
  const mark = (id: string, freesPercent = 0) =>
    gc.mark(id, async () => {
      destroyed.push(id);
      usage.diskUsedPercent -= freesPercent;
    });
  return { gc, usage, destroyed, mark };
}

describe("alloc garbage collector", () => {
  test("disk above the threshold: the oldest finished allocs go until it is below", async () => {
    const { gc, usage, destroyed, mark } = setup(50);
    mark("a", 5);
    mark("b", 5);
    mark("c", 5);
    usage.diskUsedPercent = 88;
    expect(await gc.keepUsageBelowThreshold()).toBe(2);
    expect(destroyed).toEqual(["a", "b"]);
    expect(gc.size).toBe(1);
  });

  test("inode use counts too; nothing to collect ends the pass", async () => {
    const { gc, usage, destroyed, mark } = setup(50);
    usage.inodesUsedPercent = 95;
    mark("a");
    expect(await gc.keepUsageBelowThreshold()).toBe(1);
    expect(await gc.keepUsageBelowThreshold()).toBe(0);
    expect(destroyed).toEqual(["a"]);
  });

  test("below the thresholds nothing is collected", async () => {
    const { gc, destroyed, mark } = setup(50);
    mark("a");
    expect(await gc.keepUsageBelowThreshold()).toBe(0);
    expect(destroyed).toEqual([]);
  });

  test("make room: live + kept + new may not exceed gc_max_allocs", async () => {
    const { gc, destroyed, mark } = setup(3);
    mark("old");
    mark("older-but-marked-later");
    expect(await gc.makeRoomFor(1, 1, 0)).toBe(1);
    expect(destroyed).toEqual(["old"]);
  });

  test("make room for disk the new allocs ask for", async () => {
    const { gc, usage, destroyed } = setup(50);
    usage.availableBytes = 100 * 2 ** 20;
    gc.mark("big", async () => {
      destroyed.push("big");
      usage.availableBytes += 500 * 2 ** 20;
    });
    expect(await gc.makeRoomFor(1, 0, 300)).toBe(1);
    expect(destroyed).toEqual(["big"]);
  });

  test("marking twice keeps the first place; unmark and collect by id", async () => {
    const { gc, destroyed, mark } = setup(50);
    mark("a");
    mark("b");
    mark("a");
    gc.unmark("b");
    expect(await gc.collect("b")).toBe(false);
    expect(await gc.collectAll()).toBe(1);
    expect(destroyed).toEqual(["a"]);
  });
});
