/** The client's stats collector: one timer, one batch per driver, only the figures someone uses, and no sample outlives its task's stop. */
import { expect, test } from "bun:test";
import { StatsCollector } from "../../src/client/stats-collector.ts";
import type { DriverPlugin, TaskResourceUsage } from "../../src/drivers/driver.ts";
import { sleep, waitFor } from "../helpers/index.ts";
import { silentLogger } from "./fixtures.ts";

const usage = (n: number) => ({ ResourceUsage: {}, Timestamp: n, Pids: {} }) as unknown as TaskResourceUsage;

function batchingDriver() {
  const batches: string[][] = [];
  const driver = {
    name: "batching",
    taskStats: () => Promise.reject(new Error("asked one by one")),
    taskStatsBatch: async (ids: readonly string[]) => {
      batches.push([...ids]);
      return new Map(ids.map((id) => [id, usage(batches.length)]));
    },
  } as unknown as DriverPlugin;
  return { driver, batches };
}

test("with metrics published, every task of a driver is read in one batch per interval", async () => {
  const { driver, batches } = batchingDriver();
  const collector = new StatsCollector(50, silentLogger, true);
  const published: string[] = [];
  for (let i = 0; i < 100; i++) collector.add(`a${i}/web`, driver, (sample) => published.push(`a${i}:${sample?.Timestamp}`));
  await waitFor("two rounds", () => batches.length >= 2);
  collector.stop();
  expect(batches[0]!.length).toBe(100);
  expect(batches.every((batch) => batch.length === 100)).toBe(true);
  expect(published.length).toBeGreaterThanOrEqual(200);
});

test("without, nothing is read until someone asks; then that task, and only it, is read each interval", async () => {
  const { driver, batches } = batchingDriver();
  const collector = new StatsCollector(30, silentLogger);
  for (let i = 0; i < 100; i++) collector.add(`a${i}/web`, driver);
  await sleep(100);
  expect(batches).toEqual([]);
  expect((await collector.read("a7/web"))?.Timestamp).toBe(1);
  expect(batches).toEqual([["a7/web"]]);
  // A second read within the interval is served from the sample just taken.
  await collector.read("a7/web");
  expect(batches.length).toBe(1);
  await waitFor("the watched task read on the timer", () => batches.length >= 3);
  collector.stop();
  expect(batches.every((batch) => batch.length === 1 && batch[0] === "a7/web")).toBe(true);
  expect(await collector.read("unknown/web")).toBeUndefined();
});

test("a reading under way when the task stops is dropped, and with no task left no timer runs", async () => {
  let answer!: (usage: TaskResourceUsage) => void;
  let reads = 0;
  const driver = {
    name: "slow",
    taskStats: () => {
      reads++;
      return new Promise<TaskResourceUsage>((resolve) => (answer = resolve));
    },
  } as unknown as DriverPlugin;
  const collector = new StatsCollector(5, silentLogger, true);
  const published: (TaskResourceUsage | undefined)[] = [];
  collector.add("a/web", driver, (sample) => published.push(sample));
  await waitFor("the first read", () => reads === 1);
  collector.remove("a/web");
  answer(usage(1));
  await sleep(30);
  expect(await collector.read("a/web")).toBeUndefined();
  expect(published).toEqual([undefined]);
  expect(reads).toBe(1);
});
