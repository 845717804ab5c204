import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { cgroupDirs } from "../../src/cgroups/paths.ts";
import { processStartTime } from "../../src/stats/process.ts";
import { TaskRecoveryError } from "../../src/drivers/driver.ts";
import { HANDLE_VERSION, type TaskHandle } from "../../src/drivers/handle.ts";
import { writeExitResult } from "../../src/executor/files.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { openClientState } from "../../src/state/client/db.ts";
import { listTaskHandles } from "../../src/state/client/task-handles.ts";
import { isRunning, parentPid, runDirEntries, sleep, StartedProcesses, tempDir, waitFor } from "../helpers/index.ts";
import { testCgroupParent } from "../executor/fixtures.ts";
import { HARNESS, harnessDriver, harnessTask } from "./harness.ts";

const parent = testCgroupParent();

/** Every executor and task the stand-in agents started: a test that fails before its destroy would leave them running. */
const started = new StartedProcesses();
afterAll(() => started.killLeftovers());

interface Launched {
  allocId: string;
  taskName: string;
  pid: number;
  executorPid: number;
}

/** Runs the stand-in agent until it has started `count` tasks, then SIGKILLs it. */
async function runAndKillAgent(dataDir: string, count: number, flags: string[] = []): Promise<Launched[]> {
  const agent = spawnProcess({
    argv: [process.execPath, HARNESS, dataDir, parent, String(count), ...flags],
    env: process.env,
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = agent.stdout!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("READY\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the harness exited early: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  agent.kill("SIGKILL");
  await agent.exited;
  const launched = text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Launched);
  for (const { pid, executorPid } of launched) for (const each of [pid, executorPid]) started.add(each);
  return launched;
}

/** One task started by a stand-in agent that is then SIGKILLed, then its executor; the task's stored handle. */
async function killExecutorWhileAway(dataDir: string): Promise<{ task: Launched; stored: TaskHandle }> {
  const [task] = await runAndKillAgent(dataDir, 1);
  process.kill(task!.executorPid, "SIGKILL");
  // Until it is gone from /proc, recovery rightly takes the executor for alive and leaves the task to it.
  await waitFor("the executor to die", () => !isRunning(task!.executorPid));
  const state = openClientState(join(dataDir, "client"));
  const [row] = listTaskHandles(state);
  state.raw.close();
  return { task: task!, stored: row!.handle as TaskHandle };
}

describe("reattach", () => {
  test("after SIGKILL of the agent every task keeps running and a new agent reattaches to all of them", async () => {
    const dataDir = tempDir("drover-reattach-");
    const launched = await runAndKillAgent(dataDir, 3);
    expect(launched.length).toBe(3);
    await sleep(200);
    for (const task of launched) {
      expect(isRunning(task.pid)).toBe(true);
      expect(parentPid(task.pid)).toBe(task.executorPid);
    }

    const state = openClientState(join(dataDir, "client"));
    const stored = listTaskHandles(state);
    state.raw.close();
    expect(stored.length).toBe(3);
    const driver = harnessDriver(dataDir);
    for (const row of stored) await driver.recoverTask(row.handle as TaskHandle);
    for (const task of launched) {
      const status = driver.inspectTask(`${task.allocId}/${task.taskName}`);
      expect(status).toMatchObject({ state: "running", driverAttributes: { pid: String(task.pid) } });
    }
    // Same processes, not restarted ones; every waiter on the new agent gets the real ending.
    for (const task of launched) {
      const id = `${task.allocId}/${task.taskName}`;
      const wait = driver.waitTask(id);
      await driver.stopTask(id, 2_000, "SIGTERM");
      expect(await wait).toMatchObject({ signal: 15, exitCode: 143 });
      await driver.destroyTask(id, false);
      expect(isRunning(task.pid)).toBe(false);
    }
    // The executor they shared left with its last task, and took its files along.
    for (const task of launched) expect(isRunning(task.executorPid)).toBe(false);
    expect(runDirEntries(join(dataDir, "run"))).toEqual([]);
    // What that executor answered at the reattach went with it: a stale handle finds nothing to follow.
    await expect(driver.recoverTask(stored[0]!.handle as TaskHandle)).rejects.toBeInstanceOf(TaskRecoveryError);
  });

  test("an agent killed before it persisted the handle: the next start adopts the running task instead of starting it twice", async () => {
    const dataDir = tempDir("drover-adopt-");
    const [original] = await runAndKillAgent(dataDir, 1, ["--no-persist"]);
    const state = openClientState(join(dataDir, "client"));
    expect(listTaskHandles(state)).toEqual([]);
    state.raw.close();

    const driver = harnessDriver(dataDir);
    const { handle } = await driver.startTask(harnessTask(dataDir, parent, 0, ["sleep", "600"]));
    expect(handle.task.pid).toBe(original!.pid);
    expect(handle.executor.pid).toBe(original!.executorPid);
    const id = `${handle.allocId}/${handle.taskName}`;
    await driver.stopTask(id, 1_000);
    await driver.destroyTask(id, false);
    expect(isRunning(original!.pid)).toBe(false);
  });

  test("a task that ended while no agent was there: recovery reads its exit file", async () => {
    const dataDir = tempDir("drover-ended-");
    const [task] = await runAndKillAgent(dataDir, 1, ["--", "sh", "-c", "sleep 0.2; exit 4"]);
    const state = openClientState(join(dataDir, "client"));
    const [row] = listTaskHandles(state);
    state.raw.close();
    const handle = row!.handle as TaskHandle;
    await waitFor("the task to end and its executor to write the exit file", () => existsSync(handle.executor.exitFile));
    const driver = harnessDriver(dataDir);
    await driver.recoverTask(handle);
    const id = `${task!.allocId}/${task!.taskName}`;
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 4, signal: 0 });
    await driver.destroyTask(id, false);
    expect(isRunning(task!.executorPid)).toBe(false);
    expect(existsSync(handle.executor.exitFile)).toBe(false);
  });

  test("an executor killed while the agent was away: another executor adopts the task, which runs on with the same pid", async () => {
    const dataDir = tempDir("drover-adopted-");
    const { task, stored } = await killExecutorWhileAway(dataDir);
    const driver = harnessDriver(dataDir);
    await driver.recoverTask(stored);
    const id = `${task.allocId}/${task.taskName}`;
    const status = driver.inspectTask(id);
    expect(status).toMatchObject({ state: "running", driverAttributes: { pid: String(task.pid) } });
    expect(status.driverAttributes.executor_pid).not.toBe(String(task.executorPid));
    await driver.stopTask(id, 2_000, "SIGTERM");
    expect(await driver.waitTask(id)).toMatchObject({ signal: 15 });
    await driver.destroyTask(id, false);
  });

  test("an executor killed while an agent from before adoption was away: recovery empties the task's cgroup and says so", async () => {
    const dataDir = tempDir("drover-dead-");
    const { task, stored } = await killExecutorWhileAway(dataDir);
    // An older agent's handle has no launch request: no executor can adopt the task.
    const { launch: _, ...handle } = stored;
    const driver = harnessDriver(dataDir);
    const recovery = driver.recoverTask(handle);
    await expect(recovery).rejects.toThrow(TaskRecoveryError);
    await expect(recovery).rejects.toThrow(handle.cgroup ? /killed pids \d+/ : /killed the task's process group/);
    await waitFor("the task to be gone", () => !isRunning(task.pid));
    if (handle.cgroup) for (const dir of cgroupDirs(handle.cgroup)) expect(existsSync(dir)).toBe(false);
  });

  test("a stored pid that does not answer is never signalled", async () => {
    const dataDir = tempDir("drover-stale-");
    mkdirSync(join(dataDir, "run"));
    // Two unrelated processes that happen to hold the pids a stale handle names.
    const bystanders = [0, 1].map(() => spawnProcess({ argv: ["sleep", "600"], env: { PATH: "/usr/bin:/bin" } }));
    // Through the handles, which never signal a pid once it is reaped.
    afterAll(() => bystanders.forEach((child) => child.kill("SIGKILL")));
    const [executor, task] = bystanders.map((child) => child.pid) as [number, number];
    const handle: TaskHandle = {
      version: HANDLE_VERSION,
      driver: "raw_exec",
      allocId: "stale-alloc",
      taskName: "web",
      executor: {
        pid: executor,
        startTime: processStartTime(executor)! - 1,
        socket: join(dataDir, "run", "gone.sock"),
        exitFile: join(dataDir, "run", "gone.exit.json"),
        log: join(dataDir, "run", "gone.log"),
        protocol: 1,
        drover: "0.0.0",
      },
      task: { pid: task, startTime: processStartTime(task)! - 1 },
      cgroup: null,
      killSignal: "SIGTERM",
      startedAt: Date.now(),
    };
    const driver = harnessDriver(dataDir);
    await expect(driver.recoverTask(handle)).rejects.toThrow("does not answer");
    await sleep(100);
    expect(isRunning(executor)).toBe(true);
    expect(isRunning(task)).toBe(true);

    // With an exit file the same handle recovers to how the task ended, still touching no pid.
    writeExitResult(handle.executor.exitFile, { exitCode: 0, signal: 0, oomKilled: false, finishedAt: 1 });
    await driver.recoverTask(handle);
    expect(await driver.waitTask("stale-alloc/web")).toMatchObject({ exitCode: 0, finishedAt: 1 });
    expect(isRunning(executor)).toBe(true);
    expect(isRunning(task)).toBe(true);
  });
});
