/**
 * A stand-in agent for reattach tests, until the task runner exists: starts
 * N raw_exec tasks through the driver, persists their handles in the client
 * state DB like the task runner will, prints one JSON line per task and then
 * READY, and waits to be killed. A test SIGKILLs it and plays the next agent.
 *
 *   bun test/drivers/harness.ts <data dir> <cgroup parent> <count> [--no-persist] [-- command args...]
 *
 * --no-persist stops right after startTask, before the handle is saved: the
 * window in which Nomad 0.12 lost track of its tasks.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { RawExecDriver } from "../../src/drivers/raw-exec.ts";
import { openClientState } from "../../src/state/client/db.ts";
import { saveTaskHandle } from "../../src/state/client/task-handles.ts";

export const HARNESS = import.meta.path;
export const HARNESS_ALLOC_PREFIX = "harness-alloc";

/** The driver an agent of this data dir uses; the test's second agent builds the same. */
export function harnessDriver(dataDir: string): RawExecDriver {
  return new RawExecDriver({ enabled: true, runDir: join(dataDir, "run"), cgroups: detectCgroups(), mhzPerCore: 1000 });
}

/** The task config of task `index`; the same inputs give the same alloc id and paths. */
export function harnessTask(dataDir: string, cgroupParent: string, index: number, argv: readonly string[]) {
  const taskDir = join(dataDir, `task-${index}`);
  mkdirSync(taskDir, { recursive: true });
  return {
    allocId: `${HARNESS_ALLOC_PREFIX}-${index}`,
    taskName: "sleeper",
    command: argv[0]!,
    args: argv.slice(1),
    env: { PATH: "/usr/bin:/bin" },
    cwd: taskDir,
    stdoutPath: join(taskDir, "stdout.log"),
    stderrPath: join(taskDir, "stderr.log"),
    resources: { cpuMhz: 100, memoryMb: 64 },
    cgroupParent,
  };
}

if (import.meta.main) {
  const [dataDir, cgroupParent, countText, ...rest] = process.argv.slice(2);
  if (!dataDir || !cgroupParent || !countText) {
    console.error("usage: harness.ts <data dir> <cgroup parent> <count> [--no-persist] [-- command args...]");
    process.exit(2);
  }
  const persist = !rest.includes("--no-persist");
  const dashDash = rest.indexOf("--");
  const argv = dashDash >= 0 ? rest.slice(dashDash + 1) : ["sleep", "600"];
  const driver = harnessDriver(dataDir);
  const state = openClientState(join(dataDir, "client"));
  for (let index = 0; index < Number(countText); index++) {
    const { handle } = await driver.startTask(harnessTask(dataDir, cgroupParent, index, argv));
    if (persist) saveTaskHandle(state, { allocId: handle.allocId, taskName: handle.taskName, driver: driver.name, handle });
    console.log(JSON.stringify({ allocId: handle.allocId, taskName: handle.taskName, pid: handle.task.pid, executorPid: handle.executor.pid }));
  }
  console.log("READY");
  setInterval(() => {}, 1 << 30);
}
