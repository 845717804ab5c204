/**
 * The host reaper (src/executor/host-reaper.ts) and adoption: a task outlives
 * its executor's death, as the reaper's child, watched by another executor.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { RawExecDriver } from "../../src/drivers/raw-exec.ts";
import type { TaskConfig } from "../../src/drivers/driver.ts";
import type { TaskHandle } from "../../src/drivers/handle.ts";
import { executorsUnder, isRunning, parentPid, reapersUnder, runDirEntries, tempDir, waitFor } from "../helpers/index.ts";
import { RpcClient } from "../../src/rpc/client.ts";
import { REAPER_SOCKET, ReaperProtocol } from "../../src/executor/reaper-protocol.ts";
import { testCgroupParent } from "../executor/fixtures.ts";
import { harnessTask } from "./harness.ts";
import { DENO, DENO_DROVER } from "../helpers/runtimes.ts";

// Executors and reapers start, die and are replaced here: room for a loaded host.
setDefaultTimeout(30_000);

const dir = tempDir("drover-host-reaper-");
const parent = testCgroupParent();

function newDriver(runDir: string, handles: TaskHandle[] = [], lines: string[] = [], drover?: readonly string[]) {
  return new RawExecDriver({
    enabled: true,
    runDir,
    drover,
    cgroups: detectCgroups(),
    mhzPerCore: 2000,
    tasksPerExecutor: 2,
    onHandleChange: (handle) => handles.push(handle),
    log: (line) => lines.push(line),
  });
}

let next = 0;
function config(command: string, args: string[]): TaskConfig {
  // Indexes of this file's own, apart from the harness's (which counts from 0 in each data dir).
  return harnessTask(dir, parent, 1000 + ++next, [command, ...args]);
}

/** A task that runs until `flag` exists, then exits with `code`. */
function untilFlag(flag: string, code: number): TaskConfig {
  return config("sh", ["-c", `while [ ! -e ${flag} ]; do sleep 0.05; done; exit ${code}`]);
}

const drivers: RawExecDriver[] = [];
const started: string[] = [];
afterAll(async () => {
  for (const driver of drivers) for (const id of started) await driver.destroyTask(id, true).catch(() => undefined);
});

async function start(driver: RawExecDriver, task: TaskConfig) {
  const { handle } = await driver.startTask(task);
  const id = `${task.allocId}/${task.taskName}`;
  started.push(id);
  return { id, handle, task };
}

describe("the host reaper", () => {
  const runDir = join(dir, "run");
  const handles: TaskHandle[] = [];
  const lines: string[] = [];
  const driver = newDriver(runDir, handles, lines);
  drivers.push(driver);

  test("starts every executor as its child, one reaper per run directory", async () => {
    const a = await start(driver, config("sleep", ["600"]));
    const b = await start(driver, config("sleep", ["600"]));
    const c = await start(driver, config("sleep", ["600"]));
    const reapers = reapersUnder(runDir);
    expect(reapers.length).toBe(1);
    for (const each of [a, b, c]) expect(parentPid(each.handle.executor.pid)).toBe(reapers[0]!);
    expect(parentPid(a.handle.task.pid)).toBe(a.handle.executor.pid);
    for (const each of [a, b, c]) await driver.destroyTask(each.id, true);
  });

  test("refuses bad input naming the field, and starts nothing", async () => {
    const rpc = await RpcClient.connect(join(runDir, REAPER_SOCKET), ReaperProtocol);
    try {
      const before = executorsUnder(runDir);
      await expect(rpc.call("spawnExecutor", { base: "/etc/ex-evil", drover: ["/bin/true"] })).rejects.toThrow("base: /etc/ex-evil is not a name in");
      await expect(rpc.call("spawnExecutor", { base: join(runDir, "ex-x"), drover: [] })).rejects.toThrow("drover");
      await expect(rpc.call("exitStatus", { pid: 0, startTime: 1, waitMs: 0 })).rejects.toThrow("pid");
      expect(await rpc.call("exitStatus", { pid: 1, startTime: 1, waitMs: 0 })).toBeNull();
      expect(executorsUnder(runDir)).toEqual(before);
    } finally {
      rpc.close();
    }
  });

  test("SIGKILL of an executor: its tasks run on with the same pids, adopted; signal, stats, exec, logs and stop reach them; a later exit reports its real code", async () => {
    const flag = join(dir, "exit-now");
    const a = await start(driver, untilFlag(flag, 7));
    const b = await start(driver, config("sh", ["-c", "trap 'echo got USR1' USR1; trap 'echo got TERM; exit 0' TERM; echo up; while true; do sleep 0.05; done"]));
    expect(b.handle.executor.pid).toBe(a.handle.executor.pid);
    const dead = a.handle.executor.pid;
    process.kill(dead, "SIGKILL");
    for (const each of [a, b]) {
      await waitFor(`${each.id} adopted`, () => driver.inspectTask(each.id).driverAttributes.executor_pid !== String(dead));
      expect(driver.inspectTask(each.id)).toMatchObject({ state: "running", driverAttributes: { pid: String(each.handle.task.pid) } });
      expect(isRunning(each.handle.task.pid)).toBe(true);
      expect(parentPid(each.handle.task.pid)).toBe(reapersUnder(runDir)[0]!);
    }
    // The new executor is in the persisted handle, and no line says the task was killed.
    expect(handles.map((handle) => handle.allocId).sort()).toEqual([a.handle.allocId, b.handle.allocId].sort());
    expect(handles.every((handle) => handle.executor.pid !== dead && handle.task.pid === (handle.allocId === a.handle.allocId ? a : b).handle.task.pid)).toBe(true);
    expect(lines.filter((line) => line.includes("adopted the task")).length).toBe(2);

    expect(Object.keys((await driver.taskStats(a.id)).Pids)).toContain(String(a.handle.task.pid));
    expect(await driver.execTask(b.id, ["sh", "-c", "echo inside"], 5_000)).toEqual({ stdout: "inside\n", stderr: "", exitCode: 0 });
    await driver.signalTask(b.id, "SIGUSR1");
    await waitFor("the task's answer to SIGUSR1 in its log", () => readFileSync(b.task.stdoutPath, "utf8") === "up\ngot USR1\n");
    await driver.stopTask(b.id, 5_000, "SIGTERM");
    expect(await driver.waitTask(b.id)).toMatchObject({ exitCode: 0, signal: 0 });
    expect(readFileSync(b.task.stdoutPath, "utf8")).toBe("up\ngot USR1\ngot TERM\n");

    writeFileSync(flag, "");
    expect(await driver.waitTask(a.id)).toMatchObject({ exitCode: 7, signal: 0 });
    // Durable as for a launched task: the adopter wrote the exit file.
    const adoptedA = handles.find((handle) => handle.allocId === a.handle.allocId)!;
    expect(JSON.parse(readFileSync(adoptedA.executor.exitFile, "utf8"))).toMatchObject({ exitCode: 7 });
    for (const each of [a, b]) await driver.destroyTask(each.id, false);
    await waitFor("the dead executor's files to go", () => !existsSync(a.handle.executor.socket));
  });

  test("a new agent reattaches to an adopted task through its persisted handle", async () => {
    const a = await start(driver, config("sh", ["-c", "trap 'exit 3' TERM; while true; do sleep 0.05; done"]));
    process.kill(a.handle.executor.pid, "SIGKILL");
    await waitFor("the task adopted", () => handles.find((handle) => handle.allocId === a.handle.allocId));
    const adopted = handles.find((handle) => handle.allocId === a.handle.allocId)!;
    driver.detachAll();

    const nextAgent = newDriver(runDir);
    drivers.push(nextAgent);
    await nextAgent.recoverTask(adopted);
    expect(nextAgent.inspectTask(a.id)).toMatchObject({ state: "running", driverAttributes: { pid: String(a.handle.task.pid), executor_pid: String(adopted.executor.pid) } });
    await nextAgent.stopTask(a.id, 5_000, "SIGTERM");
    expect(await nextAgent.waitTask(a.id)).toMatchObject({ exitCode: 3 });
    await nextAgent.destroyTask(a.id, false);
  });
});

describe("handles kept without their launch requests (the agent's way: read back from the stored row)", () => {
  test("the task is adopted after each of two executor deaths, and every persisted handle keeps its launch request", async () => {
    const runDir = join(dir, "stored-launch-run");
    const stored = new Map<string, TaskHandle>();
    const lines: string[] = [];
    const agent = new RawExecDriver({
      enabled: true,
      runDir,
      cgroups: detectCgroups(),
      mhzPerCore: 2000,
      tasksPerExecutor: 2,
      onHandleChange: (handle) => stored.set(handle.allocId, handle),
      storedLaunch: (allocId) => stored.get(allocId)?.launch,
      log: (line) => lines.push(line),
    });
    drivers.push(agent);
    const a = await start(agent, config("sleep", ["600"]));
    expect(a.handle.launch?.argv).toEqual(["sleep", "600"]);
    stored.set(a.handle.allocId, a.handle);
    for (let death = 1; death <= 2; death++) {
      const dead = stored.get(a.handle.allocId)!.executor.pid;
      process.kill(dead, "SIGKILL");
      await waitFor(`the task adopted after executor death ${death}`, () => stored.get(a.handle.allocId)!.executor.pid !== dead);
      expect(agent.inspectTask(a.id)).toMatchObject({ state: "running", driverAttributes: { pid: String(a.handle.task.pid), executor_pid: String(stored.get(a.handle.allocId)!.executor.pid) } });
      expect(stored.get(a.handle.allocId)!.launch).toEqual(a.handle.launch);
    }
    expect(lines.filter((line) => line.includes("adopted the task")).length).toBe(2);
    await agent.destroyTask(a.id, true);
  });
});

describe("a task that ends between its executor's death and the agent's look", () => {
  test("reports its real exit code, from the host reaper", async () => {
    const runDir = join(dir, "window-run");
    const flag = join(dir, "window-exit");
    const agent = newDriver(runDir);
    const a = await start(agent, untilFlag(flag, 5));
    // The agent goes away; the executor dies; the task ends as the reaper's child; then a new agent looks.
    agent.detachAll();
    process.kill(a.handle.executor.pid, "SIGKILL");
    await waitFor("the task reparented to the reaper", () => parentPid(a.handle.task.pid) === reapersUnder(runDir)[0]);
    writeFileSync(flag, "");
    await waitFor("the task to end", () => !isRunning(a.handle.task.pid));

    const lines: string[] = [];
    const nextAgent = newDriver(runDir, [], lines);
    drivers.push(nextAgent);
    await nextAgent.recoverTask(a.handle);
    expect(await nextAgent.waitTask(a.id)).toMatchObject({ exitCode: 5, signal: 0 });
    expect(lines.some((line) => line.includes("ended meanwhile with code 5"))).toBe(true);
    await nextAgent.destroyTask(a.id, false);
    await waitFor("nothing of the task left in the run dir", () => runDirEntries(runDir).length === 0);
  });
});

describe("the reaper killed", () => {
  test("the next executor starts under a new reaper; tasks under the old one's executors run on; new tasks are fine", async () => {
    const runDir = join(dir, "killed-run");
    const agent = newDriver(runDir);
    drivers.push(agent);
    const a = await start(agent, config("sleep", ["600"]));
    const [first] = reapersUnder(runDir);
    process.kill(first!, "SIGKILL");
    await waitFor("the first reaper gone", () => !isRunning(first!));
    // a's executor holds one task of two: fill it, then one more needs a new executor.
    const b = await start(agent, config("sleep", ["600"]));
    expect(b.handle.executor.pid).toBe(a.handle.executor.pid);
    const c = await start(agent, config("sh", ["-c", "exit 4"]));
    const [second] = reapersUnder(runDir);
    expect(second).not.toBe(first);
    expect(parentPid(c.handle.executor.pid)).toBe(second!);
    expect(await agent.waitTask(c.id)).toMatchObject({ exitCode: 4 });
    expect(isRunning(a.handle.task.pid)).toBe(true);
    await agent.stopTask(a.id, 2_000, "SIGTERM");
    expect(await agent.waitTask(a.id)).toMatchObject({ signal: 15 });
    for (const each of [a, b, c]) await agent.destroyTask(each.id, true);
  });

  test("without a reaper above its executor, a task is killed and restarted as before, and a line says why", async () => {
    const runDir = join(dir, "no-reaper-run");
    const lines: string[] = [];
    const agent = newDriver(runDir, [], lines);
    drivers.push(agent);
    const a = await start(agent, config("sleep", ["600"]));
    // The reaper dies first: the executor's tasks then go to init when the executor dies.
    const [reaper] = reapersUnder(runDir);
    process.kill(reaper!, "SIGKILL");
    await waitFor("the reaper gone", () => !isRunning(reaper!));
    process.kill(a.handle.executor.pid, "SIGKILL");
    expect((await agent.waitTask(a.id)).err).toContain(`executor (pid ${a.handle.executor.pid}) died`);
    expect(isRunning(a.handle.task.pid)).toBe(false);
    expect(lines.some((line) => line.includes("not the host reaper") && line.includes("killed and restarted"))).toBe(true);
    await agent.destroyTask(a.id, false);
  });
});

describe("under Deno", () => {
  test("the reaper and its executors run as `deno run`, and a task outlives its executor with its real exit code", async () => {
    const runDir = join(dir, "deno-run");
    const handles: TaskHandle[] = [];
    const agent = newDriver(runDir, handles, [], DENO_DROVER);
    drivers.push(agent);
    const flag = join(dir, "deno-exit");
    const a = await start(agent, untilFlag(flag, 9));
    const [reaper] = reapersUnder(runDir);
    expect(readFileSync(`/proc/${reaper}/cmdline`, "utf8")).toContain(DENO);
    expect(parentPid(a.handle.executor.pid)).toBe(reaper!);
    process.kill(a.handle.executor.pid, "SIGKILL");
    await waitFor("the task adopted", () => handles.length === 1, { timeoutMs: 60_000 });
    expect(isRunning(a.handle.task.pid)).toBe(true);
    writeFileSync(flag, "");
    expect(await agent.waitTask(a.id)).toMatchObject({ exitCode: 9, signal: 0 });
    await agent.destroyTask(a.id, false);
  }, 120_000);
});
