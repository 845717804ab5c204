/** The client's stats collector: one timer, one batch per driver, and no sample outlives its task's stop. */
import { expect, test } from "bun:test";
import { StatsCollector } from "../../src/client/stats-collector.ts";
import type { DriverPlugin, TaskResourceUsage } from "../../src/drivers/driver.ts";
import { waitFor } from "../helpers/index.ts";
import { silentLogger } from "./fixtures.ts";

const usage = (n: number) => ({ ResourceUsage: {}, Timestamp: n, Pids: {} }) as unknown as TaskResourceUsage;

test("every task of a driver is read in one batch per interval, and the API sees each one's newest sample", async () => {
  const batches: string[][] = [];
  const driver = {
    name: "batching",
    taskStats: () => Promise.reject(new Error("asked one by one")),
    taskStatsBatch: async (ids: readonly string[]) => {
      batches.push([...ids]);
      return new Map(ids.map((id) => [id, usage(batches.length)]));
    },
  } as unknown as DriverPlugin;
  const collector = new StatsCollector(50, silentLogger);
  const published: string[] = [];
  for (let i = 0; i < 100; i++) collector.add(`a${i}/web`, driver, (sample) => published.push(`a${i}:${sample?.Timestamp}`));
  await waitFor("two rounds", () => batches.length >= 2);
  collector.stop();
  expect(batches[0]!.length).toBe(100);
  expect(batches.every((batch) => batch.length === 100 || batch.length === 0)).toBe(true);
  expect(collector.latest("a7/web")?.Timestamp).toBeGreaterThanOrEqual(1);
  expect(collector.latest("unknown/web")).toBeUndefined();
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
  const collector = new StatsCollector(5, silentLogger);
  const published: (TaskResourceUsage | undefined)[] = [];
  collector.add("a/web", driver, (sample) => published.push(sample));
  await waitFor("the first read", () => reads === 1);
  collector.remove("a/web");
  answer(usage(1));
  await new Promise((resolve) => setTimeout(resolve, 30));
  expect(collector.latest("a/web")).toBeUndefined();
  expect(published).toEqual([undefined]);
  expect(reads).toBe(1);
});
