/**
 * Deployment health of allocs placed by a Nomad deployment (Nomad's
 * allocrunner health hook, for health_check "checks" without Consul checks
 * and "task_states"): a deployment only moves on once each new alloc is
 * reported healthy, or fails when one is reported unhealthy.
 *
 *   tracked (alloc has a DeploymentID and its group an update block, no health yet)
 *     │ every main task running ──> MinHealthyTime later, still all running ──> Healthy = true
 *     │ a task leaves running     ──> wait again
 *     │ a task failed, or the alloc failed ─────────────────────────────────> Healthy = false
 *     └ HealthyDeadline passes first ─────────────────────────────────────────> Healthy = false
 *
 * The verdict goes out once, with the alloc's latest report, through the same
 * serialized Node.UpdateAlloc path as every other report.
 */
import type { AllocClientUpdate } from "../structs/api.ts";

export interface DeploymentWatch {
  minHealthyMs: number;
  deadlineMs: number;
  /** Main tasks (no lifecycle, or a sidecar) must run; prestart tasks may have ended well. */
  mainTasks: readonly string[];
  canary: boolean;
}

interface Tracked {
  watch: DeploymentWatch;
  last?: AllocClientUpdate;
  healthyTimer?: ReturnType<typeof setTimeout>;
  deadlineTimer: ReturnType<typeof setTimeout>;
}

export class DeploymentHealth {
  private readonly tracked = new Map<string, Tracked>();

  constructor(private readonly report: (update: AllocClientUpdate) => void) {}

  /** Starts watching an alloc (once; a later version of it keeps the first watch). */
  track(allocId: string, watch: DeploymentWatch): void {
    if (this.tracked.has(allocId)) return;
    const deadlineTimer = setTimeout(() => this.decide(allocId, false), watch.deadlineMs);
    this.tracked.set(allocId, { watch, deadlineTimer });
  }

  /** Every report the client sends passes here. */
  observe(update: AllocClientUpdate): void {
    const entry = this.tracked.get(update.ID);
    if (!entry) return;
    entry.last = update;
    const states = update.TaskStates ?? {};
    const failed = update.ClientStatus === "failed" || Object.values(states).some((state) => state.Failed);
    if (failed) return this.decide(update.ID, false);
    const allRunning = entry.watch.mainTasks.every((task) => states[task]?.State === "running");
    if (!allRunning) {
      clearTimeout(entry.healthyTimer);
      entry.healthyTimer = undefined;
      return;
    }
    entry.healthyTimer ??= setTimeout(() => this.decide(update.ID, true), entry.watch.minHealthyMs);
  }

  /** The alloc left the node: nothing more to say about it. */
  forget(allocId: string): void {
    const entry = this.tracked.get(allocId);
    if (!entry) return;
    clearTimeout(entry.healthyTimer);
    clearTimeout(entry.deadlineTimer);
    this.tracked.delete(allocId);
  }

  stop(): void {
    for (const id of [...this.tracked.keys()]) this.forget(id);
  }

  private decide(allocId: string, healthy: boolean): void {
    const entry = this.tracked.get(allocId);
    if (!entry) return;
    this.forget(allocId);
    // Node.UpdateAlloc replaces the alloc's task states with what it carries: only a report seen can carry the verdict.
    const last = entry.last;
    if (!last) return;
    this.report({
      ...last,
      DeploymentStatus: { Healthy: healthy, Timestamp: new Date().toISOString(), Canary: entry.watch.canary, ModifyIndex: 0 },
    });
  }
}
