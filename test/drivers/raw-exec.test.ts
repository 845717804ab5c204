import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupDirs } from "../../src/cgroups/paths.ts";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { descendants } from "../../src/stats/process.ts";
import { RawExecDriver } from "../../src/drivers/raw-exec.ts";
import { SPARE_EXECUTOR_WAIT_MS } from "../../src/drivers/executor-pool.ts";
import { UnrunnableTaskError, type TaskConfig } from "../../src/drivers/driver.ts";
import { isRunning, runDirEntries, tempDir, waitFor } from "../helpers/index.ts";
import { canUseCgroups, testCgroupParent } from "../executor/fixtures.ts";

const dir = tempDir("drover-rawexec-");
const runDir = join(dir, "run");
const parent = testCgroupParent();
const driver = new RawExecDriver({ enabled: true, runDir, cgroups: detectCgroups(), mhzPerCore: 2000 });

/** Every task id this file configured: a test that fails before its destroy leaves nothing running after the file. */
const taskIds: string[] = [];
afterAll(async () => {
  for (const id of taskIds) await driver.destroyTask(id, true).catch(() => undefined);
});

let next = 0;
function config(command: string, args: string[], overrides: Partial<TaskConfig> = {}): TaskConfig {
  const allocId = `raw-${process.pid}-${++next}`;
  taskIds.push(`${allocId}/web`);
  return {
    allocId,
    taskName: "web",
    command,
    args,
    env: { PATH: "/usr/bin:/bin" },
    cwd: dir,
    stdoutPath: join(dir, `${allocId}.out`),
    stderrPath: join(dir, `${allocId}.err`),
    resources: { cpuMhz: 100, memoryMb: 64 },
    cgroupParent: parent,
    ...overrides,
  };
}

/** Live processes whose command line mentions `text` (executors carry their run dir in argv), the host reaper left out. */
function processesMentioning(text: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        return cmdline.includes(text) && !cmdline.includes("\0reaper\0") && isRunning(pid);
      } catch {
        return false;
      }
    });
}

describe("raw_exec driver", () => {
  test("fingerprints healthy only when enabled, and a disabled driver starts nothing", async () => {
    expect(driver.fingerprint()).toEqual({ detected: true, healthy: true, description: "healthy", attributes: { "driver.raw_exec": "1" } });
    const disabled = new RawExecDriver({ enabled: false, runDir, cgroups: detectCgroups(), mhzPerCore: 1 });
    expect(disabled.fingerprint()).toMatchObject({ detected: false, healthy: false, description: "disabled" });
    await expect(disabled.startTask(config("true", []))).rejects.toThrow("driver raw_exec cannot start tasks: disabled");
  });

  test("a bad task config is refused naming the field", async () => {
    await expect(driver.startTask(config("true", [], { cwd: "relative/dir" }))).rejects.toThrow("cwd: must be an absolute path");
  });

  test("start, inspect, stats, stop, wait and destroy leave nothing behind", async () => {
    const task = config("sh", ["-c", "trap 'exit 0' INT; echo started; sleep 600 & wait"]);
    const { handle } = await driver.startTask(task);
    const id = `${task.allocId}/web`;
    expect(isRunning(handle.task.pid)).toBe(true);
    expect(driver.inspectTask(id)).toMatchObject({ state: "running", exitResult: null, driverAttributes: { pid: String(handle.task.pid) } });
    const stats = await driver.taskStats(id);
    expect(Object.keys(stats.Pids)).toContain(String(handle.task.pid));
    const waiters = [driver.waitTask(id), driver.waitTask(id)];
    await waitFor("output", () => existsSync(task.stdoutPath) && readFileSync(task.stdoutPath, "utf8") === "started\n");
    await driver.stopTask(id, 5_000);
    const [first, second] = await Promise.all(waiters);
    expect(first).toEqual(second!);
    expect(first).toMatchObject({ exitCode: 0, signal: 0, oomKilled: false });
    expect(driver.inspectTask(id)).toMatchObject({ state: "exited", exitResult: first });
    await driver.destroyTask(id, false);
    expect(isRunning(handle.executor.pid)).toBe(false);
    expect(readdirSync(runDir).filter((name) => name.startsWith(task.allocId.slice(0, 8)))).toEqual([]);
    if (handle.cgroup) for (const cgroupDir of cgroupDirs(handle.cgroup)) expect(existsSync(cgroupDir)).toBe(false);
    expect(() => driver.inspectTask(id)).toThrow("is not known");
  });

  test("a running task is destroyed only with force", async () => {
    const task = config("sleep", ["600"]);
    const { handle } = await driver.startTask(task);
    const id = `${task.allocId}/web`;
    await expect(driver.destroyTask(id, false)).rejects.toThrow("still running");
    await driver.destroyTask(id, true);
    expect(isRunning(handle.task.pid)).toBe(false);
    expect(isRunning(handle.executor.pid)).toBe(false);
  });

  test("a launch that fails names the path, and no executor, file or cgroup is left", async () => {
    const task = config("/no/such/binary", []);
    await expect(driver.startTask(task)).rejects.toThrow('command "/no/such/binary": /no/such/binary does not exist');
    await expect(driver.startTask(task)).rejects.toBeInstanceOf(UnrunnableTaskError);
    await waitFor("no executor left", () => processesMentioning(runDir).length === 0);
    expect(runDirEntries(runDir)).toEqual(expect.not.arrayContaining([expect.stringContaining(".sock")]));
    expect(readdirSync(runDir).length).toBe(readdirSync(runDir).filter((name) => !name.startsWith(task.allocId.slice(0, 8))).length);
  });

  test("a config key raw_exec does not read fails the task at once, naming the key", async () => {
    const started = driver.startTask(config("sleep", ["600"], { driverConfig: { syscall_add: ["keyctl"] } }));
    await expect(started).rejects.toThrow('config: unknown key "syscall_add"');
    await expect(started).rejects.toBeInstanceOf(UnrunnableTaskError);
  });

  test("execTask and signalTask reach the task", async () => {
    const task = config("sleep", ["600"], { env: { PATH: "/usr/bin:/bin", GREETING: "hello" } });
    await driver.startTask(task);
    const id = `${task.allocId}/web`;
    expect(await driver.execTask(id, ["sh", "-c", "echo $GREETING"], 5_000)).toEqual({ stdout: "hello\n", stderr: "", exitCode: 0 });
    await driver.signalTask(id, "SIGINT");
    expect(await driver.waitTask(id)).toMatchObject({ signal: 2 });
    await driver.destroyTask(id, false);
  });

  test("without the host reaper, an executor SIGKILLed mid-task: the wait ends with the failure and nothing of the task is left", async () => {
    const unreaped = new RawExecDriver({ enabled: true, runDir: join(dir, "unreaped-run"), cgroups: detectCgroups(), mhzPerCore: 2000, hostReaper: false });
    const task = config("sh", ["-c", "sleep 600 & sleep 600"]);
    const { handle } = await unreaped.startTask(task);
    const id = `${task.allocId}/web`;
    const tree = [handle.task.pid, ...descendants(handle.task.pid)];
    process.kill(handle.executor.pid, "SIGKILL");
    const result = await unreaped.waitTask(id);
    expect(result.err).toContain(`executor (pid ${handle.executor.pid}) died`);
    for (const pid of tree) expect(isRunning(pid)).toBe(false);
    if (canUseCgroups) for (const cgroupDir of cgroupDirs(handle.cgroup!)) expect(existsSync(cgroupDir)).toBe(false);
    await unreaped.destroyTask(id, false);
  });
});

describe("executors shared by several tasks", () => {
  const sharing = new RawExecDriver({ enabled: true, runDir: join(dir, "shared-run"), cgroups: detectCgroups(), mhzPerCore: 2000, tasksPerExecutor: 2, hostReaper: false });
  const ids: string[] = [];
  afterAll(async () => {
    for (const id of ids) await sharing.destroyTask(id, true).catch(() => undefined);
  });
  async function start(args: string[] = ["600"]) {
    const task = config("sleep", args);
    const { handle } = await sharing.startTask(task);
    ids.push(`${task.allocId}/web`);
    return { id: `${task.allocId}/web`, handle };
  }

  test("tasks fill an executor up to tasks_per_executor; each has its own exit file and cgroup; the executor leaves with its last task", async () => {
    const [a, b, c] = [await start(), await start(), await start()];
    expect(b.handle.executor.pid).toBe(a.handle.executor.pid);
    expect(c.handle.executor.pid).not.toBe(a.handle.executor.pid);
    expect(new Set([a, b, c].map((t) => t.handle.executor.exitFile)).size).toBe(3);
    if (a.handle.cgroup) expect(cgroupDirs(a.handle.cgroup)[0]).not.toBe(cgroupDirs(b.handle.cgroup!)[0]);

    await sharing.stopTask(a.id, 1_000);
    await sharing.destroyTask(a.id, false);
    expect(isRunning(a.handle.task.pid)).toBe(false);
    expect(isRunning(b.handle.task.pid)).toBe(true);
    expect(isRunning(a.handle.executor.pid)).toBe(true);
    await sharing.destroyTask(b.id, true);
    await waitFor("the emptied executor to exit", () => !isRunning(a.handle.executor.pid));
    expect(existsSync(a.handle.executor.socket)).toBe(false);
    expect(isRunning(c.handle.task.pid)).toBe(true);
    await sharing.destroyTask(c.id, true);
  });

  test("the stats of many tasks come in one call per executor; a task that ended has none", async () => {
    const [a, b, c] = [await start(), await start(), await start(["0"])];
    await sharing.waitTask(c.id);
    const samples = await sharing.taskStatsBatch([a.id, b.id, c.id, "unknown/web"]);
    expect([...samples.keys()].sort()).toEqual([a.id, b.id].sort());
    expect(Object.keys(samples.get(a.id)!.Pids)).toContain(String(a.handle.task.pid));
    for (const each of [a, b, c]) await sharing.destroyTask(each.id, true);
  });

  // With the host reaper, a crashed executor's tasks run on (host-reaper.test.ts); without it:
  test("without the host reaper, a crashed executor costs only its own tasks: they end with the failure, the others run on, new tasks get a live executor", async () => {
    const [a, b, c] = [await start(), await start(), await start()];
    process.kill(a.handle.executor.pid, "SIGKILL");
    for (const lost of [a, b]) {
      expect((await sharing.waitTask(lost.id)).err).toContain(`executor (pid ${a.handle.executor.pid}) died`);
      expect(isRunning(lost.handle.task.pid)).toBe(false);
    }
    expect(isRunning(c.handle.task.pid)).toBe(true);
    expect(sharing.inspectTask(c.id).state).toBe("running");
    const d = await start();
    expect(d.handle.executor.pid).toBe(c.handle.executor.pid);
    for (const each of [a, b, c, d]) await sharing.destroyTask(each.id, true);
    expect(runDirEntries(join(dir, "shared-run"))).toEqual([]);
  });
});

describe("an executor started ahead of its task (prepare)", () => {
  const runDirAhead = join(dir, "ahead-run");
  const ahead = new RawExecDriver({ enabled: true, runDir: runDirAhead, cgroups: detectCgroups(), mhzPerCore: 2000 });

  test("the task then runs under the executor prepare started: one executor, none left after its destroy", async () => {
    ahead.prepare();
    await waitFor("the executor prepare started", () => processesMentioning(runDirAhead).length === 1);
    const [early] = processesMentioning(runDirAhead);
    const task = config("sleep", ["600"]);
    const { handle } = await ahead.startTask(task);
    expect(handle.executor.pid).toBe(early!);
    expect(processesMentioning(runDirAhead)).toEqual([early!]);
    await ahead.destroyTask(`${task.allocId}/web`, true);
    await waitFor("no executor left", () => processesMentioning(runDirAhead).length === 0);
    expect(runDirEntries(runDirAhead)).toEqual([]);
  });

  test(`one no task takes (its hooks failed) leaves by itself after ${SPARE_EXECUTOR_WAIT_MS} ms, its files with it`, async () => {
    ahead.prepare();
    await waitFor("the executor prepare started", () => processesMentioning(runDirAhead).length === 1);
    await waitFor("the unused executor to leave", () => processesMentioning(runDirAhead).length === 0 && runDirEntries(runDirAhead).length === 0, {
      timeoutMs: SPARE_EXECUTOR_WAIT_MS * 3,
    });
  }, SPARE_EXECUTOR_WAIT_MS * 4);
});
