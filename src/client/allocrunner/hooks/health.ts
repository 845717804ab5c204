/**
 * Decides a service alloc's health (Nomad's alloc health watcher hook and
 * allochealth tracker); the runner reports it as the alloc's
 * DeploymentStatus, which moves deployments and drains along.
 *
 *   prerun / update to another deployment ──> parameters:
 *       in a deployment: the group's `update` (none, or health_check "manual": nothing to decide)
 *       otherwise: the group's `migrate` (Nomad's defaults without one)
 *     ├─ healthy_deadline passes first ──────────────────────────> unhealthy
 *     └─ on every task state or check change:
 *          a task failed ────────────────────────────────────────> unhealthy
 *          every task that should run runs (prestart tasks done),
 *          and with health_check "checks" every check passes ──> min_healthy_time timer
 *            (cancelled whenever that stops holding) ──> fires ──> healthy
 *   decided, postrun, shutdown, the alloc stopping ──> stop watching
 *
 * A decision is kept by the runner (local state) for its deployment, so a
 * restarted agent does not judge an alloc twice.
 */
import type { Logger } from "../../../lib/logger.ts";
import { NS_PER_MS } from "../../../lib/units.ts";
import { allocTaskGroup, type Allocation } from "../../../structs/alloc.ts";
import { DEFAULT_MIGRATE_STRATEGY, type TaskGroup } from "../../../structs/job.ts";
import type { TaskState } from "../../../structs/task-state.ts";
import type { CheckStatuses } from "../check-statuses.ts";
import type { AllocHook, AllocHookContext } from "./hook.ts";

/** Nomad's DefaultMigrateStrategy health parameters, for a service group without a migrate block. */

interface HealthParams {
  useChecks: boolean;
  minHealthyMs: number;
  deadlineMs: number;
}

/** How the alloc's health is judged, or undefined when the client does not judge it. */
export function healthParams(alloc: Allocation): HealthParams | undefined {
  const group = allocTaskGroup(alloc);
  if (alloc.Job.Type !== "service" || !group) return undefined;
  if (alloc.DeploymentID !== "") {
    const update = group.Update;
    if (!update || update.MaxParallel === 0 || update.HealthCheck === "manual") return undefined;
    return { useChecks: update.HealthCheck === "checks", minHealthyMs: update.MinHealthyTime / NS_PER_MS, deadlineMs: update.HealthyDeadline / NS_PER_MS };
  }
  const migrate = group.Migrate ?? DEFAULT_MIGRATE_STRATEGY;
  return { useChecks: migrate.HealthCheck === "checks", minHealthyMs: migrate.MinHealthyTime / NS_PER_MS, deadlineMs: migrate.HealthyDeadline / NS_PER_MS };
}

/** Whether every task is where a healthy alloc has it: running, or (prestart, non-sidecar poststart) done well. */
function tasksHealthy(group: TaskGroup, states: Record<string, TaskState>): "healthy" | "failed" | "waiting" {
  let waiting = false;
  for (const task of group.Tasks) {
    const state = states[task.Name];
    if (!state) return "waiting";
    if (state.State === "dead" && state.Failed) return "failed";
    const hook = task.Lifecycle?.Hook;
    if (hook === "poststop") continue;
    const ephemeral = (hook === "prestart" || hook === "poststart") && !task.Lifecycle?.Sidecar;
    if (state.State === "running" || (ephemeral && state.State === "dead")) continue;
    waiting = true;
  }
  return waiting ? "waiting" : "healthy";
}

/** What one judgement watches; dropped once it is decided or stopped. */
interface Watching {
  ctx: AllocHookContext;
  params: HealthParams;
  group: TaskGroup;
  deadline: ReturnType<typeof setTimeout>;
  minTimer: ReturnType<typeof setTimeout> | undefined;
  unsubscribeTasks: () => void;
  unsubscribeChecks: () => void;
  unsubscribeStop: () => void;
}

/**
 * A class, its methods on the prototype and the judgement's state in one
 * record: one lives per running alloc (issue 35: the agent's memory per task).
 */
class HealthHook implements AllocHook {
  readonly name = "alloc_health_watcher";
  /** The deployment whose health is being (or was) judged. */
  private judging: string | undefined;
  private watching: Watching | undefined;

  constructor(
    private readonly checks: CheckStatuses,
    private readonly logger: Logger,
  ) {}

  async prerun(ctx: AllocHookContext): Promise<void> {
    this.watch(ctx);
  }

  async update(ctx: AllocHookContext): Promise<void> {
    if (ctx.alloc.DeploymentID === this.judging) return;
    // Moved to another deployment (an in-place update): its health is judged afresh.
    const decided = ctx.health.healthRecord();
    if (decided && decided.deploymentId !== ctx.alloc.DeploymentID) ctx.health.clearHealth();
    this.watch(ctx);
  }

  async postrun(): Promise<void> {
    this.stopWatching();
  }

  async destroy(): Promise<void> {
    this.stopWatching();
  }

  async shutdown(): Promise<void> {
    this.stopWatching();
  }

  private watch(ctx: AllocHookContext): void {
    this.stopWatching();
    const { alloc, health } = ctx;
    this.judging = alloc.DeploymentID;
    const existing = health.healthRecord();
    if (existing && existing.deploymentId === alloc.DeploymentID) return;
    if (alloc.DeploymentStatus?.Healthy !== null && alloc.DeploymentStatus?.Healthy !== undefined) return;
    const params = healthParams(alloc);
    const group = allocTaskGroup(alloc);
    if (!params || !group) return;

    // Made here, not with the hook: an alloc that has no health to judge (no deployment) keeps no closures for it.
    const evaluate = () => this.judge();
    const watching: Watching = {
      ctx,
      params,
      group,
      deadline: setTimeout(() => this.decide(watching, false), params.deadlineMs),
      minTimer: undefined,
      unsubscribeTasks: health.onTaskStateChange(evaluate),
      unsubscribeChecks: this.checks.onChange(evaluate),
      unsubscribeStop: ctx.stopping.onStop(() => this.stopWatching()),
    };
    this.watching = watching;
    this.judge();
  }

  private judge(): void {
    const watching = this.watching;
    if (!watching || watching.ctx.stopping.stopped) return;
    const tasks = tasksHealthy(watching.group, watching.ctx.health.taskStates());
    if (tasks === "failed") return this.decide(watching, false);
    const ready = tasks === "healthy" && (!watching.params.useChecks || this.checks.allPassing());
    if (!ready) {
      clearTimeout(watching.minTimer);
      watching.minTimer = undefined;
    } else if (!watching.minTimer) {
      watching.minTimer = setTimeout(() => this.decide(watching, true), watching.params.minHealthyMs);
    }
  }

  private decide(watching: Watching, healthy: boolean): void {
    if (this.watching !== watching) return;
    this.stopWatching();
    const { alloc, health } = watching.ctx;
    this.logger.debug({ alloc_id: alloc.ID, healthy, deployment_id: alloc.DeploymentID }, "alloc health decided");
    health.recordHealth(healthy);
  }

  private stopWatching(): void {
    const watching = this.watching;
    if (!watching) return;
    this.watching = undefined;
    clearTimeout(watching.minTimer);
    clearTimeout(watching.deadline);
    watching.unsubscribeTasks();
    watching.unsubscribeChecks();
    watching.unsubscribeStop();
  }
}

export function healthHook(checks: CheckStatuses, logger: Logger): AllocHook {
  return new HealthHook(checks, logger);
}
