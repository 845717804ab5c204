/**
 * Running isolated tasks in throwaway alloc dirs (layout.ts) the way the
 * executor will: spec file, startIsolatedTask / startInTask, pipes for stdout
 * and stderr. A test file that starts processes here registers
 * `afterEach(killStarted)` itself: bun loads this module once per run, so a
 * hook registered here would attach to the first file that imports it only.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startInTask, startIsolatedTask } from "../../src/nsenter/launch.ts";
import type { ExecSpecInput, IsolationSpecInput } from "../../src/nsenter/spec.ts";
import type { ChildProcess } from "../../src/runtime/spawn.ts";
import { capabilities, tempDir } from "../helpers/index.ts";
import { type AllocLayout, createAllocLayout, isolationSpec } from "./layout.ts";

export { type AllocLayout, isolationSpec };

/** Where a test makes a memory cgroup: the v1 memory hierarchy, or the v2 root; undefined without cgroups. */
export const memoryCgroupRoot =
  capabilities.cgroups.mode === "v1" ? capabilities.cgroups.mounts.memory : capabilities.cgroups.mode === "v2" ? capabilities.cgroups.mount : undefined;

let layouts = 0;

/** A fresh alloc layout in a temp dir removed after the file's tests. */
export function allocLayout(task = "web"): AllocLayout {
  return createAllocLayout(join(tempDir("drover-nsenter-"), `alloc-${process.pid}-${layouts++}`), task);
}

const started = new Set<ChildProcess>();

/**
 * SIGKILLs what the test started and waits for it to end. Through the child
 * handles, never bare pids: a handle whose process has been reaped sends
 * nothing, so a pid that was reused is never signalled.
 */
export async function killStarted(): Promise<void> {
  const children = [...started];
  started.clear();
  for (const child of children) child.kill("SIGKILL");
  await Promise.all(children.map((child) => child.exited));
}

let specs = 0;

/** Writes `spec` beside the alloc layout; returns its path. */
export function writeSpec(layout: AllocLayout, spec: unknown): string {
  const path = join(layout.root, `spec-${specs++}.json`);
  writeFileSync(path, JSON.stringify(spec));
  return path;
}

/** Starts an isolated task with piped stdout/stderr; the spec file lives beside the alloc dir. */
export function startTask(layout: AllocLayout, spec: IsolationSpecInput): ChildProcess {
  const child = startIsolatedTask(writeSpec(layout, spec), { env: {}, stdout: "pipe", stderr: "pipe" });
  started.add(child);
  return child;
}

export function startExec(layout: AllocLayout, taskPid: number, spec: ExecSpecInput): ChildProcess {
  const child = startInTask(taskPid, writeSpec(layout, spec), { env: {}, stdout: "pipe", stderr: "pipe" });
  started.add(child);
  return child;
}

export interface Finished {
  exitCode: number;
  signal: number;
  stdout: string;
  stderr: string;
}

export async function finish(child: ChildProcess): Promise<Finished> {
  const [status, stdout, stderr] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  return { ...status, stdout, stderr };
}

/** Runs `script` with /bin/sh inside an isolated task and waits for it. */
export async function runScript(layout: AllocLayout, script: string, overrides: Partial<IsolationSpecInput> = {}): Promise<Finished> {
  return finish(startTask(layout, isolationSpec(layout, { argv: ["/bin/sh", "-c", script], ...overrides })));
}
