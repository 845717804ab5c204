/**
 * Fixtures for tests that run real executors and tasks: a cgroup parent of
 * their own (removed afterwards with anything left in it), launch requests,
 * and executors that are killed by pid at the end of the file.
 */
import { afterAll } from "bun:test";
import { join } from "node:path";
import { taskCgroupPaths } from "../../src/cgroups/paths.ts";
import { isAlive } from "../../src/stats/process.ts";
import { startExecutor, type StartedExecutor } from "../../src/executor/client.ts";
import type { LaunchRequest } from "../../src/executor/protocol.ts";
import { capabilities, killPids } from "../helpers/index.ts";
import { canUseCgroups } from "../helpers/cgroups.ts";

export { canUseCgroups, testCgroupParent } from "../helpers/cgroups.ts";

/** The cgroup of a task under `parent`, or null when the host has none. */
export function cgroupFor(parent: string, allocId: string, taskName: string) {
  return canUseCgroups ? taskCgroupPaths(capabilities.cgroups, parent, allocId, taskName) : null;
}

let nextAlloc = 0;

/** A launch request for `argv`, writing to files in `dir`, in a cgroup under `cgroupParent`. */
export function launchRequest(dir: string, cgroupParent: string, argv: string[], overrides: Partial<LaunchRequest> = {}): LaunchRequest {
  const allocId = `alloc-${process.pid}-${++nextAlloc}`;
  return {
    allocId,
    taskName: "task",
    argv,
    env: { PATH: "/usr/bin:/bin", FOO: "bar" },
    cwd: dir,
    stdoutPath: join(dir, `${allocId}.stdout`),
    stderrPath: join(dir, `${allocId}.stderr`),
    resources: { cpuMhz: 250, memoryMb: 128, memoryMaxMb: 0, pidsLimit: 0 },
    cgroup: cgroupFor(cgroupParent, allocId, "task"),
    mhzPerCore: 2000,
    ...overrides,
  };
}

/** Starts an executor whose process (and task tree) is killed when the file's tests end. */
export async function testExecutor(runDir: string): Promise<StartedExecutor> {
  const started = await startExecutor({ runDir });
  afterAll(async () => {
    // destroy kills the task tree; the SIGKILL covers an executor that no longer answers.
    await started.connection.call("destroy", {}, 10_000).catch(() => undefined);
    started.connection.close();
    // A destroyed executor has exited, and its pid may name another process by now.
    if (isAlive(started.pid, started.startTime)) killPids([started.pid]);
  });
  return started;
}
