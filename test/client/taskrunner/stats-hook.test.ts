/** The stats hook: a reading under way when the task stops never outlives the stop. */
import { expect, test } from "bun:test";
import { statsHook } from "../../../src/client/taskrunner/hooks/stats.ts";
import type { DriverPlugin, TaskResourceUsage } from "../../../src/drivers/driver.ts";
import type { PoststartRequest } from "../../../src/client/taskrunner/hooks/hook.ts";
import { silentLogger } from "../fixtures.ts";

const usage = { ResourceUsage: {}, Timestamp: 1, Pids: {} } as unknown as TaskResourceUsage;

test("a sample read while the task stopped is dropped, and no sampling timer starts after the stop", async () => {
  let answer!: (usage: TaskResourceUsage) => void;
  let reads = 0;
  const driver = {
    taskStats: () => {
      reads++;
      return new Promise<TaskResourceUsage>((resolve) => (answer = resolve));
    },
  } as unknown as DriverPlugin;
  const published: (TaskResourceUsage | undefined)[] = [];
  const hook = statsHook({ driver, taskId: "a/web", intervalMs: 1, logger: silentLogger, publish: (u) => published.push(u) });

  const started = hook.poststart!({} as PoststartRequest);
  await hook.stop!({} as never);
  answer(usage);
  await started;

  expect(hook.latest()).toBeUndefined();
  expect(published).toEqual([undefined]);
  // With a 1 ms interval, a timer left running would have read again by the time a later read was answered.
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(reads).toBe(1);
});
