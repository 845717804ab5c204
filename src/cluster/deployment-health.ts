/**
 * The health of a service alloc as Nomad's client reports it
 * (AllocDeploymentStatus; Nomad's allocrunner health hook, for health_check
 * "checks" without Consul checks and "task_states"): a deployment only moves
 * on once each new alloc is reported healthy, or fails when one is reported
 * unhealthy; a drain migrates a group's allocs only as fast as the ones
 * already moved turn healthy.
 *
 *   tracked (a service alloc with no health yet; timing from the group's update
 *            block in a deployment, else from its migrate block)
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
  healthyTimer?: ReturnType<typeof setTimeout>;
  deadlineTimer: ReturnType<typeof setTimeout>;
}

export class DeploymentHealth {
  private readonly tracked = new Map<string, Tracked>();
  /**
   * The latest report of each alloc, watched or not: a restored alloc reports
   * its state once, before the servers are asked for it and its watch exists.
   */
  private readonly latest = new Map<string, AllocClientUpdate>();

  constructor(private readonly report: (update: AllocClientUpdate) => void) {}

  /** Starts watching an alloc (once; a later version of it keeps the first watch). */
  track(allocId: string, watch: DeploymentWatch): void {
    if (this.tracked.has(allocId)) return;
    const deadlineTimer = setTimeout(() => this.decide(allocId, false), watch.deadlineMs);
    this.tracked.set(allocId, { watch, deadlineTimer });
    this.evaluate(allocId);
  }

  /** Every report the client sends passes here. */
  observe(update: AllocClientUpdate): void {
    this.latest.set(update.ID, update);
    this.evaluate(update.ID);
  }

  private evaluate(allocId: string): void {
    const entry = this.tracked.get(allocId);
    const update = this.latest.get(allocId);
    if (!entry || !update) return;
    const states = update.TaskStates ?? {};
    const failed = update.ClientStatus === "failed" || Object.values(states).some((state) => state.Failed);
    if (failed) return this.decide(allocId, false);
    const allRunning = entry.watch.mainTasks.every((task) => states[task]?.State === "running");
    if (!allRunning) {
      clearTimeout(entry.healthyTimer);
      entry.healthyTimer = undefined;
      return;
    }
    entry.healthyTimer ??= setTimeout(() => this.decide(allocId, true), entry.watch.minHealthyMs);
  }

  /** The alloc left the node: nothing more to say about it. */
  drop(allocId: string): void {
    this.untrack(allocId);
    this.latest.delete(allocId);
  }

  stop(): void {
    for (const id of [...this.tracked.keys()]) this.untrack(id);
    this.latest.clear();
  }

  private untrack(allocId: string): void {
    const entry = this.tracked.get(allocId);
    if (!entry) return;
    clearTimeout(entry.healthyTimer);
    clearTimeout(entry.deadlineTimer);
    this.tracked.delete(allocId);
  }

  private decide(allocId: string, healthy: boolean): void {
    const entry = this.tracked.get(allocId);
    if (!entry) return;
    this.untrack(allocId);
    // Node.UpdateAlloc replaces the alloc's task states with what it carries: only a report seen can carry the verdict.
    const last = this.latest.get(allocId);
    if (!last) return;
    this.report({
      ...last,
      DeploymentStatus: { Healthy: healthy, Timestamp: new Date().toISOString(), Canary: entry.watch.canary, ModifyIndex: 0 },
    });
  }
}
