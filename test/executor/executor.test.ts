import { describe, expect, test } from "bun:test";
import { closeSync, constants, existsSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readExitResult } from "../../src/executor/files.ts";
import { createTaskFifos } from "../../src/log-layout/fifo.ts";
import { stageFifoPath } from "../../src/log-layout/layout.ts";
import { connectExecutor, startExecutor } from "../../src/executor/client.ts";
import { descendants } from "../../src/stats/process.ts";
import { cgroupDirs } from "../../src/cgroups/paths.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { capabilities, isRunning, parentPid, processState, sleep, tempDir, waitFor } from "../helpers/index.ts";
import { canUseCgroups, launchRequest, testCgroupParent, testExecutor } from "./fixtures.ts";

const dir = tempDir("drover-exec-");
const runDir = join(dir, "run");
const parent = testCgroupParent();

/** Reads the pid a task wrote to `file` once it is there. */
async function pidFrom(file: string): Promise<number> {
  return Number(await waitFor(`${file}`, () => (existsSync(file) ? readFileSync(file, "utf8").trim() : "")));
}

describe("executor", () => {
  test("a program that says it is ready but never listens is killed, and the error names the socket", async () => {
    const fake = join(dir, "closes-fd3-only");
    writeFileSync(fake, "#!/bin/sh\nexec 3>&-\necho up >&2\nexec sleep 600\n", { mode: 0o755 });
    let pid = 0;
    const start = startExecutor({ runDir, drover: [fake] }).catch((err: Error) => {
      pid = Number(/executor \(pid (\d+)\)/.exec(err.message)?.[1]);
      throw err;
    });
    await expect(start).rejects.toThrow(/does not answer on \S+\.sock \(.*\): up/);
    await waitFor("the mute executor killed", () => !isRunning(pid));
  });

  test("a program that dies before it listens is reported as exited, with its log", async () => {
    const start = startExecutor({ runDir, drover: ["/bin/false"] });
    await expect(start).rejects.toThrow(/executor \(pid \d+\) exited before it listened: \(its log is empty\)/);
  });

  test("answers version before launch, then reports the task it runs", async () => {
    const executor = await testExecutor(runDir);
    const before = await executor.connection.call("version", {});
    expect(before).toMatchObject({ protocol: 2, pid: executor.pid, state: "idle", task: null, tasks: [] });
    const request = launchRequest(dir, parent, ["sleep", "600"]);
    const launched = await executor.connection.call("launch", request);
    const after = await executor.connection.call("version", {});
    expect(after).toMatchObject({ state: "running", allocId: request.allocId, taskName: "task", task: launched });
    expect(parentPid(launched.pid)).toBe(executor.pid);
  });

  test("supervises several tasks by key: version lists them, each is waited, signalled and destroyed alone, destroy() ends all", async () => {
    const executor = await testExecutor(runDir);
    const first = launchRequest(dir, parent, ["sleep", "600"]);
    const second = launchRequest(dir, parent, ["sleep", "600"]);
    const a = await executor.connection.call("launch", { ...first, key: "task-a" });
    const b = await executor.connection.call("launch", { ...second, key: "task-b" });
    await expect(executor.connection.call("launch", { ...second, key: "task-a" })).rejects.toThrow("already runs");
    const version = await executor.connection.call("version", {});
    expect(version).toMatchObject({ state: "running", allocId: null, task: null });
    expect(version.tasks).toEqual([
      { key: "task-a", allocId: first.allocId, taskName: "task", state: "running", task: a },
      { key: "task-b", allocId: second.allocId, taskName: "task", state: "running", task: b },
    ]);
    await executor.connection.call("signal", { key: "task-a", signal: "USR1" });
    expect(await executor.connection.call("wait", { key: "task-a" })).toMatchObject({ signal: 10 });
    expect(readExitResult(join(runDir, "task-a.exit.json"))).toMatchObject({ signal: 10 });
    expect(isRunning(b.pid)).toBe(true);
    await executor.connection.call("destroy", { key: "task-a" });
    expect(existsSync(join(runDir, "task-a.exit.json"))).toBe(false);
    await expect(executor.connection.call("wait", { key: "task-a" })).rejects.toThrow('no task "task-a"');
    expect((await executor.connection.call("version", {})).tasks?.map((task) => task.key)).toEqual(["task-b"]);
    await expect(executor.connection.call("launch", { ...first, key: "../escape" })).rejects.toThrow("key");
    await executor.connection.call("destroy", {});
    expect(isRunning(b.pid)).toBe(false);
    await waitFor("the executor to exit", () => !isRunning(executor.pid));
  });

  test("the task gets only fds 0-2: not the ready pipe the executor was started with", async () => {
    const executor = await testExecutor(runDir);
    const request = launchRequest(dir, parent, ["sh", "-c", "ls /proc/$$/fd"]);
    await executor.connection.call("launch", request);
    expect(await executor.connection.call("wait", {})).toMatchObject({ exitCode: 0 });
    expect(readFileSync(request.stdoutPath, "utf8").split("\n").filter(Boolean).sort()).toEqual(["0", "1", "2"]);
  });

  // Lowering one's own OOM score needs CAP_SYS_RESOURCE, which a container's root may lack.
  const shieldable = (() => {
    try {
      writeFileSync("/proc/self/oom_score_adj", "-1000");
      writeFileSync("/proc/self/oom_score_adj", "0");
      return true;
    } catch {
      return false;
    }
  })();
  test.skipIf(!shieldable)("an agent shielded from the OOM killer starts tasks that are not (systemd's OOMScoreAdjust=-1000)", async () => {
    writeFileSync("/proc/self/oom_score_adj", "-1000");
    let executor;
    try {
      executor = await testExecutor(runDir);
    } finally {
      writeFileSync("/proc/self/oom_score_adj", "0");
    }
    const { pid } = await executor.connection.call("launch", launchRequest(dir, parent, ["sleep", "600"]));
    expect(readFileSync(`/proc/${pid}/oom_score_adj`, "utf8").trim()).toBe("0");
  });

  test("runs in its own session, with its own log file, outside the task's cgroup", async () => {
    const executor = await testExecutor(runDir);
    const request = launchRequest(dir, parent, ["sleep", "600"]);
    const { pid } = await executor.connection.call("launch", request);
    const stat = readFileSync(`/proc/${executor.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    expect(Number(stat[3])).toBe(executor.pid); // session id
    expect(readFileSync(executor.files.log, "utf8")).toContain("launched");
    if (request.cgroup) {
      const taskCgroups = readFileSync(`/proc/${pid}/cgroup`, "utf8");
      const executorCgroups = readFileSync(`/proc/${executor.pid}/cgroup`, "utf8");
      const leaf = cgroupDirs(request.cgroup)[0]!.split("/").pop()!;
      expect(taskCgroups).toContain(leaf);
      expect(executorCgroups).not.toContain(leaf);
    }
  });

  test("every concurrent waiter gets the same result, written to the exit file first", async () => {
    const executor = await testExecutor(runDir);
    await executor.connection.call("launch", launchRequest(dir, parent, ["sh", "-c", "sleep 0.3; exit 7"]));
    const other = (await connectExecutor(executor.files.socket, executor.pid)).connection;
    const waits = [executor.connection.call("wait", {}), executor.connection.call("wait", {}), other.call("wait", {}), other.call("wait", {})];
    const results = await Promise.all(waits);
    other.close();
    for (const result of results) expect(result).toEqual(results[0]!);
    expect(results[0]).toMatchObject({ exitCode: 7, signal: 0, oomKilled: false });
    expect(readExitResult(executor.files.exitFile)).toEqual(results[0]!);
  });

  test("tasks that end together each find their own result in their exit file when their shutdown answers, and their cgroups gone", async () => {
    const executor = await testExecutor(runDir);
    const codes = [3, 4, 5, 6, 7, 8];
    const requests = codes.map((code) => ({
      ...launchRequest(dir, parent, ["sh", "-c", `trap 'exit ${code}' TERM; sleep 600 & wait`]),
      key: `together-${code}`,
    }));
    for (const request of requests) await executor.connection.call("launch", request);
    const results = await Promise.all(requests.map(({ key }) => executor.connection.call("shutdown", { key, signal: "SIGTERM", graceMs: 10_000 })));
    results.forEach((result, i) => {
      expect(result).toMatchObject({ exitCode: codes[i], signal: 0 });
      expect(readExitResult(join(runDir, `${requests[i]!.key}.exit.json`))).toEqual(result);
      for (const cgroupDir of requests[i]!.cgroup ? cgroupDirs(requests[i]!.cgroup!) : []) expect(existsSync(cgroupDir)).toBe(false);
    });
  });

  test("shutdown kills a tree that ignores SIGTERM and returns only when none of it is left", async () => {
    const executor = await testExecutor(runDir);
    const pidFile = join(dir, `tree-${Date.now()}`);
    const script = `trap '' TERM; sleep 600 & sleep 600 & echo $! > ${pidFile}; wait`;
    const { pid } = await executor.connection.call("launch", launchRequest(dir, parent, ["sh", "-c", script]));
    const child = await pidFrom(pidFile);
    const tree = [pid, ...descendants(pid)];
    expect(tree.length).toBeGreaterThanOrEqual(3);
    const result = await executor.connection.call("shutdown", { signal: "SIGTERM", graceMs: 300 });
    expect(result.signal).toBe(9);
    for (const member of [...tree, child]) expect(isRunning(member)).toBe(false);
  });

  test("a background child the task leaves behind is killed when the task ends", async () => {
    const executor = await testExecutor(runDir);
    const pidFile = join(dir, `bg-${Date.now()}`);
    await executor.connection.call("launch", launchRequest(dir, parent, ["sh", "-c", `sleep 600 & echo $! > ${pidFile}`]));
    const result = await executor.connection.call("wait", {});
    expect(result.exitCode).toBe(0);
    expect(isRunning(await pidFrom(pidFile))).toBe(false);
  });

  test("orphaned grandchildren are reaped: no zombies pile up under the executor", async () => {
    const executor = await testExecutor(runDir);
    // Each ( ... &) subshell exits at once, orphaning its sleep to the executor (subreaper).
    const script = "for i in 1 2 3 4 5 6; do (sleep 0.1 &); done; sleep 600";
    await executor.connection.call("launch", launchRequest(dir, parent, ["sh", "-c", script]));
    await waitFor("orphans re-parented to the executor", () => descendants(executor.pid).length >= 7);
    // Left unreaped, the six exited sleeps would stay as zombies under the executor for good.
    await waitFor("the orphans reaped", () => descendants(executor.pid).length <= 2); // the task's sh and its sleep 600
    expect(descendants(executor.pid).filter((pid) => processState(pid) === "Z")).toEqual([]);
  });

  test("a second launch while one is under way is refused, and only one task starts", async () => {
    const executor = await testExecutor(runDir);
    // An isolated launch first loads the nsenter launcher: the second request arrives meanwhile.
    const isolated = launchRequest(dir, parent, ["ignored"], { isolation: { argv: ["sleep", "600"], hostname: "task-x" } });
    const launches = await Promise.allSettled([
      executor.connection.call("launch", isolated),
      executor.connection.call("launch", launchRequest(dir, parent, ["sleep", "600"])),
    ]);
    expect(launches.map((launch) => launch.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = launches.find((launch) => launch.status === "rejected") as PromiseRejectedResult;
    expect(String(refused.reason)).toContain("already");
    expect((await executor.connection.call("version", {})).state).not.toBe("idle");
  });

  test("signal reaches the task's main process", async () => {
    const executor = await testExecutor(runDir);
    await executor.connection.call("launch", launchRequest(dir, parent, ["sleep", "600"]));
    await executor.connection.call("signal", { signal: "USR1" });
    expect(await executor.connection.call("wait", {})).toMatchObject({ signal: 10, exitCode: 138 });
  });

  test("exec runs in the task's context and is killed at its timeout", async () => {
    const executor = await testExecutor(runDir);
    const request = launchRequest(dir, parent, ["sleep", "600"]);
    await executor.connection.call("launch", request);
    const result = await executor.connection.call("exec", { argv: ["sh", "-c", "echo $FOO; pwd; cat /proc/self/cgroup; exit 3"], timeoutMs: 5_000 });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toStartWith(`bar\n${dir}\n`);
    if (request.cgroup) expect(result.stdout).toContain(cgroupDirs(request.cgroup)[0]!.split("/").pop()!);
    const slow = await executor.connection.call("exec", { argv: ["sleep", "600"], timeoutMs: 200 });
    expect(slow.exitCode).toBe(137);
    expect(slow.stderr).toContain("timed out");
    // The command exits at once, but a process of its in a session of its own keeps the pipes open.
    const held = await executor.connection.call("exec", { argv: ["sh", "-c", "setsid sleep 600 & echo started"], timeoutMs: 300 });
    expect(held.exitCode).toBe(137);
    expect(held.stderr).toContain("timed out");
  });

  test("exec of a command that cannot run answers as a shell: 127 for one that is not there, 126 for one that is not executable", async () => {
    const executor = await testExecutor(runDir);
    await executor.connection.call("launch", launchRequest(dir, parent, ["sleep", "600"]));
    const plain = join(dir, "not-executable.sh");
    writeFileSync(plain, "#!/bin/sh\necho never\n", { mode: 0o644 });
    const cases = { [plain]: 126, [dir]: 126, [join(dir, "not-there")]: 127, "no-such-command-xyz": 127 };
    for (const [command, exitCode] of Object.entries(cases)) {
      const result = await executor.connection.call("exec", { argv: [command], timeoutMs: 5_000 });
      expect({ command, exitCode: result.exitCode, stderr: result.stderr }).toEqual({ command, exitCode, stderr: expect.stringContaining(`command "${command}"`) });
    }
  });

  test.skipIf(!capabilities.root)("runs the task as the requested user", async () => {
    const executor = await testExecutor(runDir);
    const request = launchRequest(dir, parent, ["sh", "-c", "id -u; id -G"], { user: "nobody", cwd: "/" });
    await executor.connection.call("launch", request);
    await executor.connection.call("wait", {});
    expect(readFileSync(request.stdoutPath, "utf8")).toBe("65534\n65534\n");
  });

  test("a launch with a bad command or cwd fails naming it, and the executor can still launch", async () => {
    const executor = await testExecutor(runDir);
    const missing = launchRequest(dir, parent, ["no-such-command-xyz"]);
    await expect(executor.connection.call("launch", missing)).rejects.toThrow('command "no-such-command-xyz": not found in PATH');
    const badCwd = launchRequest(dir, parent, ["true"], { cwd: join(dir, "missing-dir") });
    await expect(executor.connection.call("launch", badCwd)).rejects.toThrow(`cwd ${join(dir, "missing-dir")}: no such directory`);
    const notExecutable = join(dir, "not-executable.sh");
    writeFileSync(notExecutable, "echo hi\n", { mode: 0o644 });
    await expect(executor.connection.call("launch", launchRequest(dir, parent, [notExecutable]))).rejects.toThrow(`${notExecutable} is not executable`);
    if (missing.cgroup) for (const cgroupDir of cgroupDirs(missing.cgroup)) expect(existsSync(cgroupDir)).toBe(false);
    expect((await executor.connection.call("version", {})).state).toBe("idle");
  });

  test("a symlink planted at the stdout path is refused, never followed", async () => {
    const executor = await testExecutor(runDir);
    const target = join(dir, "victim");
    writeFileSync(target, "untouched");
    const link = join(dir, `planted-${Date.now()}`);
    symlinkSync(target, link);
    const request = launchRequest(dir, parent, ["echo", "pwned"], { stdoutPath: link });
    await expect(executor.connection.call("launch", request)).rejects.toThrow(`${link}: is a symbolic link`);
    expect(readFileSync(target, "utf8")).toBe("untouched");
  });

  test.skipIf(!canUseCgroups)("a task over its memory limit is OOM killed and reported so", async () => {
    const executor = await testExecutor(runDir);
    // tail keeps a line without newlines whole in memory: 200 MiB against a 32 MiB limit.
    const request = launchRequest(dir, parent, ["sh", "-c", "head -c 200000000 /dev/zero | tail"], {
      resources: { cpuMhz: 100, memoryMb: 32, memoryMaxMb: 0, pidsLimit: 0 },
    });
    await executor.connection.call("launch", request);
    const result = await executor.connection.call("wait", {});
    expect(result.oomKilled).toBe(true);
    for (const cgroupDir of cgroupDirs(request.cgroup!)) expect(existsSync(cgroupDir)).toBe(false);
  });

  test.skipIf(!canUseCgroups)("stats of a task that holds memory and burns CPU are non-zero, per task and per pid", async () => {
    const executor = await testExecutor(runDir);
    // tail holds the 40 MB "line" while it waits for an EOF that the sleep delays.
    const script = "{ head -c 40000000 /dev/zero; sleep 600; } | tail & while :; do :; done";
    const { pid } = await executor.connection.call("launch", launchRequest(dir, parent, ["sh", "-c", script]));
    // CPU figures compare two samples, so polls are spaced to span many clock ticks; a loaded host
    // may take a while to fill tail with the 40 MB.
    const stats = await waitFor(
      "stats showing the memory held and the CPU burnt",
      async () => {
        const sample = await executor.connection.call("stats", {});
        const usage = sample.ResourceUsage;
        return usage.MemoryStats.RSS > 30_000_000 && usage.CpuStats.Percent > 10 && sample.Pids[String(pid)] ? sample : null;
      },
      { intervalMs: 500 },
    );
    const memory = stats.ResourceUsage.MemoryStats;
    const cpu = stats.ResourceUsage.CpuStats;
    expect(memory.RSS).toBeGreaterThan(30_000_000);
    expect(memory.Usage).toBeGreaterThan(30_000_000);
    expect(memory.MaxUsage).toBeGreaterThan(30_000_000);
    expect(memory.Measured).toContain("RSS");
    expect(memory.Measured).toContain("Usage");
    expect(cpu.Percent).toBeGreaterThan(10);
    expect(cpu.UserMode + cpu.SystemMode).toBeGreaterThan(10);
    expect(cpu.TotalTicks).toBeGreaterThan(0);
    expect(cpu.Measured).toEqual(expect.arrayContaining(["System Mode", "User Mode", "Percent"]));
    expect(Object.keys(stats.Pids)).toContain(String(pid));
    expect(stats.Pids[String(pid)]!.CpuStats.Percent).toBeGreaterThan(10);
    expect(stats.Timestamp).toBeGreaterThan(Date.now() * 1e6 - 60e9);
  });

  test("a FIFO output needs no reader: the executor's spare descriptor keeps it open, 1 MiB deep, nothing lost", async () => {
    const executor = await testExecutor(runDir);
    const fifo = join(dir, `out-${Date.now()}.fifo`);
    expect(await spawnProcess({ argv: ["mkfifo", fifo], env: {} }).exited).toMatchObject({ exitCode: 0 });
    // ~108 KiB: more than a default 64 KiB pipe holds, so the task would block without F_SETPIPE_SZ.
    const request = launchRequest(dir, parent, ["seq", "1", "20000"], { stdoutPath: fifo });
    await executor.connection.call("launch", request);
    const result = await executor.connection.call("wait", {});
    expect(result).toMatchObject({ exitCode: 0, signal: 0 });
    // A log pump that comes later reads everything the task wrote.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(1 << 16);
    for (;;) {
      let n = 0;
      try {
        n = readSync(reader, buffer);
      } catch {
        break; // EAGAIN: drained
      }
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
    closeSync(reader);
    const lines = Buffer.concat(chunks).toString().trim().split("\n");
    expect(lines.length).toBe(20000);
    expect(lines[19999]).toBe("20000");
  });

  test("the executor holds a spare end of each FIFO's staging FIFO too, and leaves a symlink planted there alone", async () => {
    const executor = await testExecutor(runDir);
    const fifos = createTaskFifos(join(dir, `logs-${Date.now()}`), "web");
    const planted = join(dir, `planted-${Date.now()}`);
    writeFileSync(planted, "not a stage\n");
    unlinkSync(stageFifoPath(fifos.stderr));
    symlinkSync(planted, stageFifoPath(fifos.stderr));
    const request = launchRequest(dir, parent, ["sh", "-c", "echo out; echo err >&2"], { stdoutPath: fifos.stdout, stderrPath: fifos.stderr });
    await executor.connection.call("launch", request);
    expect(await executor.connection.call("wait", {})).toMatchObject({ exitCode: 0, signal: 0 });
    const held = readdirSync(`/proc/${executor.pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${executor.pid}/fd/${fd}`);
      } catch {
        return "";
      }
    });
    expect(held).toContain(stageFifoPath(fifos.stdout));
    expect(held).not.toContain(planted);
    expect(readFileSync(planted, "utf8")).toBe("not a stage\n");
  });

  test("an isolation spec is written to a file and the task starts as drover nsenter <spec>", async () => {
    const executor = await testExecutor(runDir);
    const isolation = { argv: ["sleep", "1"], hostname: "task-x" };
    const request = launchRequest(dir, parent, ["ignored"], { isolation });
    await executor.connection.call("launch", request);
    // The executor adds the task's cgroup directories: the role joins them itself.
    expect(JSON.parse(readFileSync(executor.files.spec, "utf8"))).toEqual({ ...isolation, cgroups: request.cgroup ? cgroupDirs(request.cgroup) : [] });
    const result = await executor.connection.call("wait", {});
    // Whatever the nsenter role made of this spec, it ran under the task's name and wrote to its stderr.
    expect(readFileSync(request.stderrPath, "utf8")).toContain("nsenter");
    expect(result.signal).toBe(0);
  });

  test("SIGTERM to the executor stops the task first, keeps the exit file, and leaves no process behind", async () => {
    const executor = await testExecutor(runDir);
    const { pid } = await executor.connection.call("launch", launchRequest(dir, parent, ["sh", "-c", "sleep 600 & sleep 600"]));
    const tree = [pid, ...descendants(pid)];
    process.kill(executor.pid, "SIGTERM");
    await waitFor("the executor to exit", () => !isRunning(executor.pid));
    for (const member of tree) expect(isRunning(member)).toBe(false);
    expect(readExitResult(executor.files.exitFile)).toMatchObject({ signal: 15 });
    expect(existsSync(executor.files.socket)).toBe(false);
  });

  test("a log pump that dies and comes back: the task only waits, never dies of SIGPIPE, and no line is lost", async () => {
    const executor = await testExecutor(runDir);
    const fifo = join(dir, `pump-${Date.now()}.fifo`);
    expect(await spawnProcess({ argv: ["mkfifo", fifo], env: {} }).exited).toMatchObject({ exitCode: 0 });
    // ~2 MB: more than the 1 MiB pipe, so the task blocks while no pump reads.
    const { pid } = await executor.connection.call("launch", launchRequest(dir, parent, ["seq", "1", "300000"], { stdoutPath: fifo }));
    const drain = (fd: number, maxBytes: number): Buffer => {
      const chunks: Buffer[] = [];
      const buffer = Buffer.alloc(1 << 16);
      let total = 0;
      while (total < maxBytes) {
        let n = 0;
        try {
          n = readSync(fd, buffer);
        } catch {
          break; // EAGAIN: nothing more right now
        }
        if (n === 0) break;
        chunks.push(Buffer.from(buffer.subarray(0, n)));
        total += n;
      }
      return Buffer.concat(chunks);
    };
    const first = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const head = drain(first, 100_000);
    closeSync(first); // the pump dies
    await sleep(300);
    expect(isRunning(pid)).toBe(true); // blocked on the full pipe, alive
    const second = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const parts = [head];
    let result: unknown = null;
    void executor.connection.call("wait", {}).then((r) => (result = r));
    while (result === null) {
      parts.push(drain(second, Infinity));
      await sleep(10);
    }
    parts.push(drain(second, Infinity));
    closeSync(second);
    expect(result).toMatchObject({ exitCode: 0, signal: 0 });
    const lines = Buffer.concat(parts).toString().trim().split("\n");
    expect(lines.length).toBe(300000);
    expect(lines.every((line, index) => line === String(index + 1))).toBe(true);
  });
});
