/**
 * Fixtures for client tests: real allocations (placed by an in-process
 * server from an HCL job), and alloc runners over the fake driver with
 * in-memory stores.
 */
import pino from "pino";
import { AllocRunner } from "../../src/client/allocrunner/alloc-runner.ts";
import { allocDirHook } from "../../src/client/allocrunner/hooks/alloc-dir.ts";
import type { AllocHook } from "../../src/client/allocrunner/hooks/hook.ts";
import { AllocDir } from "../../src/client/allocdir/alloc-dir.ts";
import type { TaskHook } from "../../src/client/taskrunner/hooks/hook.ts";
import { TaskRunner } from "../../src/client/taskrunner/task-runner.ts";
import { parseJobFile } from "../../src/jobspec/index.ts";
import { clientEndpoint } from "../../src/server/client-endpoint.ts";
import type { AllocStore, TaskStore } from "../../src/state/client/allocs.ts";
import type { AllocLocalState, TaskLocalState } from "../../src/state/client/local-state.ts";
import type { Allocation } from "../../src/structs/alloc.ts";
import type { AllocClientUpdate } from "../../src/structs/api.ts";
import type { TaskState } from "../../src/structs/task-state.ts";
import { openTestServer, testNode } from "../server/fixtures.ts";
import { tempDir } from "../helpers/index.ts";
import { FakeDriver } from "./fake-driver.ts";

export const silentLogger = pino({ level: "silent" });

/** Places `hcl` on a test node and returns the allocs, each with its job. */
export async function placeJob(hcl: string): Promise<Allocation[]> {
  const { server } = openTestServer();
  const endpoint = clientEndpoint(server);
  const node = testNode();
  await endpoint.registerNode(node);
  server.jobs.register(await parseJobFile("job.hcl", hcl), {});
  const { allocs } = await endpoint.watchAllocs(node.ID, 0);
  return allocs.map((alloc) => structuredClone(alloc));
}

/** Remembers what a runner persisted, so a second runner can be "restored" from it. */
export class MemoryStores {
  readonly tasks = new Map<string, { state: TaskState | null; local: TaskLocalState | null; handleJson: string | null }>();
  readonly allocLocal = new Map<string, AllocLocalState>();
  readonly deleted = new Set<string>();

  task(allocId: string, name: string): TaskStore {
    const key = `${allocId}/${name}`;
    const get = () => this.tasks.get(key) ?? { state: null, local: null, handleJson: null };
    return {
      load: () => structuredClone(get()),
      saveState: (state, local) => void this.tasks.set(key, { ...get(), state: structuredClone(state), local: structuredClone(local) }),
      saveLocal: (local) => void this.tasks.set(key, { ...get(), local: structuredClone(local) }),
      saveHandle: (handle) => void this.tasks.set(key, { ...get(), handleJson: JSON.stringify(handle) }),
      deleteHandle: () => void this.tasks.set(key, { ...get(), handleJson: null }),
    };
  }

  alloc(allocId: string): AllocStore {
    return {
      saveAlloc: () => {},
      saveLocal: (local) => void this.allocLocal.set(allocId, structuredClone(local)),
      loadLocal: () => this.allocLocal.get(allocId) ?? null,
      delete: () => void this.deleted.add(allocId),
    };
  }
}

export interface RunnerFixture {
  runner: AllocRunner;
  driver: FakeDriver;
  stores: MemoryStores;
  reports: AllocClientUpdate[];
}

export function allocRunner(
  alloc: Allocation,
  options: { driver?: FakeDriver; stores?: MemoryStores; taskHooks?: () => TaskHook[]; allocHooks?: AllocHook[] } = {},
): RunnerFixture {
  const driver = options.driver ?? new FakeDriver();
  const stores = options.stores ?? new MemoryStores();
  const reports: AllocClientUpdate[] = [];
  const allocDir = new AllocDir(tempDir("drover-allocs-"), alloc.ID);
  const runner = new AllocRunner({
    alloc,
    allocDir,
    hooks: options.allocHooks ?? [allocDirHook()],
    store: stores.alloc(alloc.ID),
    logger: silentLogger,
    report: (update) => reports.push(structuredClone(update)),
    taskRunner: (current, task, onStateChange) =>
      new TaskRunner({
        alloc: current,
        task,
        allocDir,
        taskDir: allocDir.taskDir(task.Name),
        driver,
        hooks: options.taskHooks?.() ?? [],
        store: stores.task(current.ID, task.Name),
        logger: silentLogger,
        envInput: () => ({
          alloc: { id: current.ID, name: current.Name, index: 0, group: current.TaskGroup, namespace: "default" },
          job: { id: current.Job.ID, name: current.Job.Name },
          meta: {},
          ports: [],
          dirs: { alloc: allocDir.shared, local: "/l", secrets: "/s" },
          node: { id: "n", name: "n", nodeClass: "", datacenter: "dc1", region: "global", attributes: {}, meta: {} },
          hostEnv: {},
        }),
        stdio: { stdoutPath: "/dev/null", stderrPath: "/dev/null" },
        cgroupParent: "drover-test",
        maxKillTimeoutMs: 30_000,
        onStateChange,
      }),
  });
  return { runner, driver, stores, reports };
}

/** An HCL task block for the fake driver. */
export function task(name: string, command: string, extra = ""): string {
  return `task "${name}" {\n driver = "raw_exec"\n config {\n command = "${command}"\n }\n ${extra}\n }`;
}

/** A job of one group with `tasks`, restarts off unless `restart` says otherwise. */
export function job(tasks: string[], options: { type?: string; restart?: string } = {}): string {
  const restart = options.restart ?? 'restart {\n attempts = 0\n mode = "fail"\n }';
  const disk = "ephemeral_disk {\n size = 2000\n }";
  return `job "j" {\n type = "${options.type ?? "batch"}"\n group "g" {\n ${restart}\n ${disk}\n ${tasks.join("\n")}\n }\n}`;
}
