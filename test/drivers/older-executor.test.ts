/** An executor left running by a drover from before a method was added (same protocol): the agent still serves its tasks. */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { RawExecDriver } from "../../src/drivers/raw-exec.ts";
import { HANDLE_VERSION, type TaskHandle } from "../../src/drivers/handle.ts";
import { EXECUTOR_PROTOCOL, ExecutorProtocol } from "../../src/executor/protocol.ts";
import { serveRpc, type Handlers } from "../../src/rpc/server.ts";
import { processStartTime } from "../../src/stats/process.ts";
import type { TaskResourceUsage } from "../../src/stats/task.ts";
import { tempDir } from "../helpers/index.ts";

const dir = tempDir("drover-older-executor-");
const runDir = join(dir, "run");
const socket = join(runDir, "old.sock");
const taskPid = process.ppid;
const launched = { pid: taskPid, startTime: processStartTime(taskPid)!, startedAt: 1 };
const usage: TaskResourceUsage = {
  ResourceUsage: {
    MemoryStats: { RSS: 1, Cache: 0, Swap: 0, MappedFile: 0, Usage: 1, MaxUsage: 1, KernelUsage: 0, KernelMaxUsage: 0, Measured: ["RSS"] },
    CpuStats: { SystemMode: 0, UserMode: 0, TotalTicks: 0, ThrottledPeriods: 0, ThrottledTime: 0, Percent: 0, Measured: [] },
    DeviceStats: [],
  },
  Timestamp: 1,
  Pids: {},
};
let statsCalls = 0;

// This process plays the old executor: what it answers is all that counts, and it has no statsBatch.
const handlers: Partial<Handlers<typeof ExecutorProtocol>> = {
  version: () => ({
    protocol: EXECUTOR_PROTOCOL,
    version: "0.0.1",
    pid: process.pid,
    state: "running",
    allocId: "old-alloc",
    taskName: "web",
    task: launched,
    tasks: [{ key: "old-key", allocId: "old-alloc", taskName: "web", state: "running", task: launched }],
  }),
  wait: () => new Promise<never>(() => {}),
  stats: () => (statsCalls++, usage),
};
mkdirSync(runDir, { recursive: true, mode: 0o700 });
const server = serveRpc(socket, ExecutorProtocol, handlers as Handlers<typeof ExecutorProtocol>);
const driver = new RawExecDriver({ enabled: true, runDir, cgroups: detectCgroups(), mhzPerCore: 1000 });
afterAll(() => {
  driver.detachAll();
  server.stop();
});

test("an executor without statsBatch has its tasks' stats asked task by task", async () => {
  const handle: TaskHandle = {
    version: HANDLE_VERSION,
    driver: "raw_exec",
    allocId: "old-alloc",
    taskName: "web",
    executor: {
      pid: process.pid,
      startTime: processStartTime(process.pid)!,
      socket,
      exitFile: join(runDir, "old-key.exit.json"),
      log: join(runDir, "old.log"),
      protocol: EXECUTOR_PROTOCOL,
      drover: "0.0.1",
      key: "old-key",
    },
    task: { pid: launched.pid, startTime: launched.startTime },
    cgroup: null,
    killSignal: "SIGTERM",
    startedAt: 1,
  };
  await driver.recoverTask(handle);
  expect((await driver.taskStatsBatch(["old-alloc/web"])).get("old-alloc/web")).toEqual(usage);
  expect(statsCalls).toBe(1);
  // Remembered: the next round goes straight to stats.
  expect((await driver.taskStatsBatch(["old-alloc/web"])).get("old-alloc/web")).toEqual(usage);
  expect(statsCalls).toBe(2);
});
