/**
 * `drover nsenter --exec`: a command run inside a running isolated task
 * (`drover alloc exec`), with its own stdio and exit code.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXIT_SETUP_FAILED, IsolationError } from "../../src/nsenter/errors.ts";
import { spawnProcess, spawnSelf } from "../../src/runtime/spawn.ts";
import { capabilities, processState, waitFor } from "../helpers/index.ts";
import { allocLayout, finish, isolationSpec, killStarted, memoryCgroupRoot, startExec, startTask } from "./fixture.ts";

afterEach(killStarted);

const EXEC_ENV = { PATH: "/usr/bin:/bin" };

async function runningTask(layout = allocLayout(), overrides = {}) {
  const task = startTask(layout, isolationSpec(layout, { argv: ["sleep", "60"], ...overrides }));
  await waitFor("the task to exec", () => readFileSync(`/proc/${task.pid}/comm`, "utf8").trim() === "sleep");
  return { layout, task };
}

describe.skipIf(!capabilities.root)("exec into a running task", () => {
  test("runs in the task's namespaces and root, with its own output and exit code", async () => {
    const { layout, task } = await runningTask();
    writeFileSync(join(layout.taskDir, "local", "config"), "from-local");
    const script = "uname -n; tr '\\0' ' ' < /proc/1/cmdline; echo; ps -e -o pid= | wc -l; cat /local/config; echo; id -u; exit 3";
    const session = await finish(startExec(layout, task.pid, { argv: ["/bin/sh", "-c", script], env: EXEC_ENV }));
    expect(session.exitCode).toBe(3);
    expect(session.stdout.split("\n").map((line) => line.trim())).toEqual(["a1b2c3d4", "sleep 60", "4", "from-local", "65534", ""]);
    expect(processState(task.pid)).toBe("S");
  });

  test("shares every namespace of the task", async () => {
    const { layout, task } = await runningTask(allocLayout(), { network: "none" });
    const session = startExec(layout, task.pid, { argv: ["sleep", "30"], env: EXEC_ENV });
    await waitFor("the session to exec", () => readFileSync(`/proc/${session.pid}/comm`, "utf8").trim() === "sleep");
    for (const kind of ["pid", "mnt", "uts", "ipc", "net"]) {
      expect(readlinkSync(`/proc/${session.pid}/ns/${kind}`)).toBe(readlinkSync(`/proc/${task.pid}/ns/${kind}`));
    }
    expect(readlinkSync(`/proc/${session.pid}/root`)).toBe("/");
    // The session dies with the task: PID 1's death ends its namespace.
    task.kill("SIGKILL");
    expect((await session.exited).signal).toBe(9);
  });

  test.skipIf(!memoryCgroupRoot)("joins the task's cgroup", async () => {
    const cgroup = join(memoryCgroupRoot!, `drover-nsenter-exec-test-${process.pid}`);
    mkdirSync(cgroup);
    try {
      const { layout, task } = await runningTask(allocLayout(), { cgroups: [cgroup] });
      const session = await finish(startExec(layout, task.pid, { argv: ["cat", "/proc/self/cgroup"], env: EXEC_ENV, cgroups: [cgroup] }));
      // In the task's cgroup namespace, whose root is that cgroup: a command left elsewhere would read "/.." paths.
      const memory = session.stdout.split("\n").find((line) => (capabilities.cgroups.mode === "v1" ? /^\d+:memory:/ : /^0::/).test(line));
      expect(memory).toEndWith(":/");
    } finally {
      // The cgroup can go only once the task in it has ended.
      await killStarted();
      rmdirSync(cgroup);
    }
  });

  test("is refused for a pid that is not a running isolated task of the caller, before anything starts", async () => {
    const layout = allocLayout();
    const exited = startTask(layout, isolationSpec(layout, { argv: ["true"] }));
    await exited.exited;
    const plain = spawnProcess({ argv: ["sleep", "30"], env: {} });
    try {
      // The caller's child but in the caller's own namespace; reaped; not the caller's child (init).
      for (const pid of [plain.pid, exited.pid, 1]) {
        expect(() => startExec(layout, pid, { argv: ["true"], env: EXEC_ENV })).toThrow(IsolationError);
      }
    } finally {
      plain.kill("SIGKILL");
      await plain.exited;
    }
  });

  test("refuses to run when not started in the task's PID namespace", async () => {
    const { layout, task } = await runningTask();
    const specFile = join(layout.root, "exec-outside.json");
    writeFileSync(specFile, JSON.stringify({ argv: ["true"], env: EXEC_ENV }));
    const stray = await finish(spawnSelf("nsenter", ["--exec", String(task.pid), specFile], { env: {}, stdout: "pipe", stderr: "pipe" }));
    expect(stray.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(stray.stderr).toContain(`not in the PID namespace of task ${task.pid}`);
  });
});
