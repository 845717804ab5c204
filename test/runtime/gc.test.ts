import { describe, expect, test } from "bun:test";
import { BurstCollector, SettledCollector } from "../../src/runtime/gc.ts";

/** Short enough for a test, long enough that the touches below land within one wait. */
const QUIET_MS = 50;

function countingCollector(): { collector: SettledCollector; collections: () => number; next: () => Promise<void> } {
  let count = 0;
  let wake: () => void = () => {};
  const collector = new SettledCollector(QUIET_MS, () => {
    count++;
    wake();
  });
  return { collector, collections: () => count, next: () => new Promise<void>((resolve) => (wake = resolve)) };
}

describe("SettledCollector", () => {
  test("a burst of touches ends in one collection", async () => {
    const { collector, collections, next } = countingCollector();
    const collected = next();
    for (let i = 0; i < 100; i++) collector.touch();
    await collected;
    expect(collections()).toBe(1);
  });

  test("a touch after a collection brings another", async () => {
    const { collector, collections, next } = countingCollector();
    let collected = next();
    collector.touch();
    await collected;
    collected = next();
    collector.touch();
    await collected;
    expect(collections()).toBe(2);
  });

  test("stop drops the pending collection", async () => {
    const { collector, collections } = countingCollector();
    collector.touch();
    collector.stop();
    // A second collector's collection, touched after the first's would have run, marks the time to look.
    const later = countingCollector();
    const laterCollected = later.next();
    later.collector.touch();
    await laterCollected;
    expect(collections()).toBe(0);
  });
});

describe("BurstCollector", () => {
  test("touches while one is pending bring no more; a touch after it brings the next", async () => {
    let count = 0;
    let wake: () => void = () => {};
    const collector = new BurstCollector(QUIET_MS, () => {
      count++;
      wake();
    });
    let collected = new Promise<void>((resolve) => (wake = resolve));
    for (let i = 0; i < 100; i++) collector.touch();
    await collected;
    expect(count).toBe(1);
    collected = new Promise<void>((resolve) => (wake = resolve));
    collector.touch();
    await collected;
    expect(count).toBe(2);
  });
});
