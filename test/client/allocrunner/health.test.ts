import { describe, expect, test } from "bun:test";
import { CheckStatuses } from "../../../src/client/allocrunner/check-statuses.ts";
import type { AllocHealthAccess, AllocHookContext } from "../../../src/client/allocrunner/hooks/hook.ts";
import { healthHook } from "../../../src/client/allocrunner/hooks/health.ts";
import type { AllocDir } from "../../../src/client/allocdir/alloc-dir.ts";
import pino from "pino";
import type { AllocHealth } from "../../../src/state/client/local-state.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";
import type { TaskState } from "../../../src/structs/task-state.ts";
import { waitFor } from "../../helpers/index.ts";
import { StopFlag } from "../../../src/lib/stop-flag.ts";
import { openTestServer, testJob, testNode } from "../../server/fixtures.ts";

const MS_NS = 1e6;

/** A real alloc of a service whose group has `update` (placed by a test server). */
function allocWith(update: Record<string, unknown>): Allocation {
  const { server } = openTestServer();
  const node = testNode();
  server.nodes.upsert(node);
  const job = testJob("h") as { TaskGroups: Record<string, unknown>[] };
  job.TaskGroups[0]!.Update = { MaxParallel: 1, HealthyDeadline: 60_000 * MS_NS, ProgressDeadline: 120_000 * MS_NS, ...update };
  server.jobs.register(job);
  const alloc = server.nodes.allocations(node.ID)[0]!;
  server.close();
  return alloc;
}

const state = (State: TaskState["State"], Failed = false): TaskState => ({ State, Failed, Restarts: 0, LastRestart: null, StartedAt: null, FinishedAt: null, Events: [] });

/** What the alloc runner gives the hook: the tasks' states, and where the decision goes. */
function fakeRunner(alloc: Allocation) {
  const states: Record<string, TaskState> = { srv: state("pending") };
  const listeners = new Set<() => void>();
  const decisions: boolean[] = [];
  let decided: AllocHealth | undefined;
  const stopping = new StopFlag();
  const health: AllocHealthAccess = {
    healthRecord: () => decided,
    recordHealth: (healthy) => {
      decisions.push(healthy);
      decided = { deploymentId: ctx.alloc.DeploymentID, healthy, timestamp: new Date().toISOString() };
    },
    clearHealth: () => {
      decided = undefined;
    },
    taskStates: () => states,
    onTaskStateChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const ctx: AllocHookContext = { alloc, allocDir: {} as AllocDir, stopping, killTasks: () => {}, health, network: { networkRecord: () => undefined, recordNetwork: () => {} } };
  const setTask = (next: TaskState) => {
    states.srv = next;
    for (const listener of [...listeners]) listener();
  };
  return { ctx, decisions, setTask, stopping, listeners };
}

const logger = pino({ level: "silent" });

describe("alloc health watcher", () => {
  test("task_states: healthy once every task has run for min_healthy_time", async () => {
    const alloc = allocWith({ HealthCheck: "task_states", MinHealthyTime: 50 * MS_NS });
    const runner = fakeRunner(alloc);
    const hook = healthHook(new CheckStatuses(), logger);
    await hook.prerun!(runner.ctx);
    runner.setTask(state("running"));
    await waitFor("a decision", () => runner.decisions.length > 0);
    expect(runner.decisions).toEqual([true]);
    expect(runner.listeners.size).toBe(0);
  });

  test("checks: not healthy while a check is critical; healthy once every check passes", async () => {
    const alloc = allocWith({ HealthCheck: "checks", MinHealthyTime: 0 });
    const runner = fakeRunner(alloc);
    const checks = new CheckStatuses();
    checks.set("srv/web/alive", "critical");
    const hook = healthHook(checks, logger);
    await hook.prerun!(runner.ctx);
    runner.setTask(state("running"));
    checks.set("srv/web/alive", "warning");
    expect(runner.decisions).toEqual([]);
    checks.set("srv/web/alive", "passing");
    await waitFor("a decision", () => runner.decisions.length > 0);
    expect(runner.decisions).toEqual([true]);
  });

  test("a failed task is unhealthy at once; so is an alloc not healthy by healthy_deadline", async () => {
    const failing = fakeRunner(allocWith({ HealthCheck: "task_states", MinHealthyTime: 0 }));
    await healthHook(new CheckStatuses(), logger).prerun!(failing.ctx);
    failing.setTask(state("dead", true));
    expect(failing.decisions).toEqual([false]);

    const slow = fakeRunner(allocWith({ HealthCheck: "task_states", MinHealthyTime: 40 * MS_NS, HealthyDeadline: 60 * MS_NS, ProgressDeadline: 0 }));
    await healthHook(new CheckStatuses(), logger).prerun!(slow.ctx);
    await waitFor("a decision", () => slow.decisions.length > 0);
    expect(slow.decisions).toEqual([false]);
  });

  test("manual health: nothing decided; a decision already made for the deployment is not made again", async () => {
    const manual = fakeRunner(allocWith({ HealthCheck: "manual", MinHealthyTime: 0 }));
    await healthHook(new CheckStatuses(), logger).prerun!(manual.ctx);
    manual.setTask(state("running"));
    expect(manual.listeners.size).toBe(0);

    const restored = fakeRunner(allocWith({ HealthCheck: "task_states", MinHealthyTime: 0 }));
    restored.ctx.health.recordHealth(true);
    const hook = healthHook(new CheckStatuses(), logger);
    await hook.prerun!(restored.ctx);
    expect(restored.listeners.size).toBe(0);
    // Moved to another deployment (an in-place update): judged again.
    await hook.update!({ ...restored.ctx, alloc: { ...restored.ctx.alloc, DeploymentID: "another" } });
    expect(restored.ctx.health.healthRecord()).toBeUndefined();
    expect(restored.listeners.size).toBe(1);
    restored.stopping.stop();
    expect(restored.listeners.size).toBe(0);
  });
});
