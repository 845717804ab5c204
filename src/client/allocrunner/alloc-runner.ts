/**
 * Runs one allocation: its directory, its task runners in lifecycle order,
 * and the status the server hears about.
 *
 *   prerun hooks (alloc dir, previous alloc) ── one fails: every task dead, failed (Setup Failure)
 *     │
 *     ▼
 *   prestart tasks ── sidecars: until running; others: until they end successfully
 *     │                 (one that fails for good fails the alloc; main tasks never start)
 *     ▼
 *   main tasks ──> all running ──> poststart tasks
 *     │
 *     │ a task fails for good ──> kill the rest (Sibling Task Failed)
 *     │ the leader ends       ──> kill the rest (Leader Task Dead)
 *     ▼
 *   every main task dead ──> kill sidecars (Main Tasks Dead) ──> poststop tasks ──> postrun hooks
 *
 *   update(alloc) ──> saved ──> broadcaster (newest wins) ──> update loop applies:
 *                  DesiredStatus stop ──> kill every task but poststop (they still run)
 *                  otherwise         ──> alloc hooks' update (health: a new deployment is judged
 *                                        afresh), task runners' update hooks (no restart)
 *   restored with DesiredStatus stop ──> kill every task, postrun hooks; nothing new starts
 *   destroy():     kill what runs, then destroy hooks (alloc dir removed)
 *   shutdown():    the agent stops: let go, tasks keep running
 *
 * ClientStatus, as Nomad derives it: failed if any task failed; else running
 * if any runs; else pending if any waits; else complete.
 */
import { existsSync } from "node:fs";
import type { AllocCheckStatus } from "../../structs/check-status.ts";
import type { CheckStatuses } from "./check-statuses.ts";
import type { Logger } from "../../lib/logger.ts";
import type { AllocClientUpdate } from "../../structs/api.ts";
import type { AllocStore } from "../../state/client/allocs.ts";
import { BurstCollector } from "../../runtime/gc.ts";
import type { AllocHealth, AllocLocalState } from "../../state/client/local-state.ts";
import { allocTaskGroup, type Allocation, type ClientStatus } from "../../structs/alloc.ts";
import type { Task, TaskGroup } from "../../structs/job.ts";
import { TASK_EVENT, type TaskState } from "../../structs/task-state.ts";
import type { AllocDir } from "../allocdir/alloc-dir.ts";
import type { TaskRunner } from "../taskrunner/task-runner.ts";
import { taskEvent } from "../taskrunner/task-state.ts";
import { HookProgress } from "../hook-progress.ts";
import { AllocBroadcaster, type AllocWatcher } from "./broadcaster.ts";
import { ListenerList } from "../../lib/listener-list.ts";
import { StopFlag } from "../../lib/stop-flag.ts";
import type { AllocHealthAccess, AllocHook, AllocHookContext, AllocNetworkAccess } from "./hooks/hook.ts";

export interface AllocRunnerDeps {
  alloc: Allocation;
  allocDir: AllocDir;
  hooks: readonly AllocHook[];
  store: AllocStore;
  logger: Logger;
  /** Makes the runner of one task; `onStateChange` must be wired to this alloc runner. */
  taskRunner(alloc: Allocation, task: Task, onStateChange: (task: string, state: TaskState) => void): TaskRunner;
  /** Reports the alloc's client status and task states towards the server. */
  report(update: AllocClientUpdate): void;
  /** The runner's own stored state, already read (null: none stored); read from the store when absent. */
  local?: AllocLocalState | null;
  /** Its tasks' service check results (the checks API reads them); none when absent. */
  checks?: CheckStatuses;
}

type Phase = "prestart" | "main" | "poststart" | "poststop";

/**
 * How often task state changes (tasks starting, restarting, stopping) may have their young garbage
 * collected: while 500 tasks start, ~40 collections over the ~2 s the burst takes here. Without
 * them what the tasks keep ends up spread over three times the heap blocks it needs (issue 35:
 * the agent's memory per running task, docs/performance.md memory-5).
 */
export const BURST_COLLECT_MS = 50;

/** One for the whole client: a burst is every alloc's tasks at once. */
const burstCollector = new BurstCollector(BURST_COLLECT_MS);

/** A prerun hook that is done, one object for every alloc: entries are replaced, never changed (issue 35: memory per task). */
const PRERUN_DONE = Object.freeze({ done: true });

function phaseOf(runner: TaskRunner): Phase {
  return runner.lifecycle?.Hook ?? "main";
}

export function clientStatus(states: readonly TaskState[]): { status: ClientStatus; description: string } {
  if (states.some((s) => s.State === "dead" && s.Failed)) return { status: "failed", description: "Failed tasks" };
  if (states.some((s) => s.State === "running")) return { status: "running", description: "Tasks are running" };
  if (states.some((s) => s.State === "pending")) return { status: "pending", description: "No tasks have started" };
  return { status: "complete", description: "All tasks have completed" };
}

/**
 * Resolves when every runner's life ended. A lone runner's own promise rather than a Promise.all
 * around it: an alloc of one task waits on that for as long as the task runs (issue 35).
 */
function allRun(runners: readonly TaskRunner[]): Promise<unknown> {
  return runners.length === 1 ? runners[0]!.run() : Promise.all(runners.map((runner) => runner.run()));
}

export class AllocRunner implements AllocHealthAccess, AllocNetworkAccess {
  private alloc: Allocation;
  /** In the group's order; an array, not a Map: a group has a handful, and a Map's table costs ~250 bytes per running alloc (issue 35). */
  private readonly runners: TaskRunner[] = [];
  private readonly local: AllocLocalState;
  private readonly stateWaiters = new ListenerList<() => void>();
  private readonly taskStateListeners = new ListenerList<() => void>();
  /** Set with the first kill: from then on nothing new starts, and a prerun hook still waiting (for a previous alloc) lets go. */
  private readonly stopping = new StopFlag();
  private runPromise: Promise<void> | undefined;
  private destroyed = false;
  /** Made with the first update or close: most allocs run to their end without one (issue 35: what a running alloc keeps). */
  private updateChannel: { updates: AllocBroadcaster<Allocation>; watcher: AllocWatcher<Allocation> } | undefined;
  private updating: Promise<void> | undefined;
  private updatesClosed = false;
  private appliedIndex = -1;

  private readonly deps: Omit<AllocRunnerDeps, "taskRunner" | "local">;

  constructor({ taskRunner, local, ...deps }: AllocRunnerDeps) {
    // The task runners' maker and the stored state are used here only: the runner keeps its deps
    // while the alloc runs, not the maker's scope (issue 35: the agent's memory per task).
    this.deps = deps;
    this.alloc = deps.alloc;
    this.local = (local !== undefined ? local : deps.store.loadLocal()) ?? { hooks: {} };
    const onTaskState = (name: string, state: TaskState) => this.onTaskState(name, state);
    for (const task of this.group().Tasks) this.runners.push(taskRunner(this.alloc, task, onTaskState));
  }

  get id(): string {
    return this.alloc.ID;
  }

  get current(): Allocation {
    return this.alloc;
  }

  get allocDir(): AllocDir {
    return this.deps.allocDir;
  }

  /** The latest result of each of its service checks, by check ID (GET /v1/client/allocation/:id/checks). */
  checkResults(): Record<string, AllocCheckStatus> {
    return this.deps.checks?.byId() ?? {};
  }

  task(name: string): TaskRunner | undefined {
    return this.runners.find((runner) => runner.name === name);
  }

  get tasks(): TaskRunner[] {
    return [...this.runners];
  }

  taskStates(): Record<string, TaskState> {
    return Object.fromEntries(this.runners.map((runner) => [runner.name, runner.state]));
  }

  status(): { status: ClientStatus; description: string } {
    return clientStatus(this.tasks.map((runner) => runner.state));
  }

  /** True once every task is dead (the alloc holds nothing on the node). */
  get isTerminal(): boolean {
    return this.tasks.every((runner) => runner.state.State === "dead");
  }

  /** Reattaches the tasks of an alloc an earlier agent ran; then run() carries on from where they are. */
  async restore(): Promise<void> {
    for (const runner of this.tasks) await runner.restore();
  }

  /** Runs the alloc to its end; resolves when every task is dead and postrun hooks ran. Idempotent. */
  run(): Promise<void> {
    this.runPromise ??= this.lifecycle();
    return this.runPromise;
  }

  /**
   * A new version of the alloc from the server: saved at once (a restarted
   * agent acts on the newest version it was sent), then applied by the update
   * loop, which takes the newest version waiting and skips the ones it
   * replaced. Resolves once this version, or a newer one, is applied.
   */
  update(alloc: Allocation): Promise<void> {
    // The server resends every alloc of the node on each change; a version already seen is not news.
    if (alloc.AllocModifyIndex <= this.alloc.AllocModifyIndex) return Promise.resolve();
    this.alloc = alloc;
    this.deps.store.saveAlloc(alloc);
    this.updates().updates.send(alloc);
    this.updating ??= this.applyUpdates();
    return this.until(() => this.appliedIndex >= alloc.AllocModifyIndex || this.updatesClosed);
  }

  private async applyUpdates(): Promise<void> {
    for (;;) {
      const alloc = await this.updates().watcher.next();
      if (!alloc) {
        this.updatesClosed = true;
        this.wake();
        return;
      }
      try {
        if (alloc.DesiredStatus !== "run") {
          await this.stop(alloc.DesiredDescription || "alloc was stopped");
        } else {
          for (const hook of this.deps.hooks) await hook.update?.(this.hookContext(alloc));
          for (const runner of this.tasks) runner.update(alloc);
        }
      } catch (err) {
        this.deps.logger.warn({ err, alloc: alloc.ID }, "applying an alloc update failed");
      }
      this.appliedIndex = alloc.AllocModifyIndex;
      this.wake();
    }
  }

  /** Kills every task but the poststop ones (which then run); resolves when the alloc is done. */
  async stop(reason: string): Promise<void> {
    await this.killTasks((runner) => phaseOf(runner) !== "poststop", () => taskEvent(TASK_EVENT.Killing, { KillReason: reason }));
    await this.run();
  }

  /** Stops what runs, then removes the alloc from the node (directory and state). Always finishes. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    try {
      await this.killTasks(() => true, () => taskEvent(TASK_EVENT.Killing, { KillReason: "alloc destroyed" }));
      await this.run();
    } catch (err) {
      this.deps.logger.warn({ err, alloc: this.alloc.ID }, "stopping tasks during destroy failed");
    }
    this.updates().updates.close();
    for (const hook of this.deps.hooks) {
      try {
        await hook.destroy?.(this.hookContext());
      } catch (err) {
        this.deps.logger.warn({ err, alloc: this.alloc.ID, hook: hook.name }, "destroy hook failed");
      }
    }
    this.deps.store.delete();
  }

  /** The agent is stopping: hooks let go; tasks keep running for the next agent. */
  async shutdown(): Promise<void> {
    this.updates().updates.close();
    for (const runner of this.tasks) await runner.shutdown();
    for (const hook of this.deps.hooks) await hook.shutdown?.();
  }

  /** The alloc's updates and the update loop's watcher of them; a watcher made after a close is closed already. */
  private updates(): { updates: AllocBroadcaster<Allocation>; watcher: AllocWatcher<Allocation> } {
    if (!this.updateChannel) {
      const updates = new AllocBroadcaster<Allocation>();
      this.updateChannel = { updates, watcher: updates.watch() };
    }
    return this.updateChannel;
  }

  private group(): TaskGroup {
    const group = allocTaskGroup(this.alloc);
    if (!group) throw new Error(`alloc ${this.alloc.ID}: job has no group "${this.alloc.TaskGroup}"`);
    return group;
  }

  /** Whether the tasks are being killed: from then on nothing new starts. */
  private get killing(): boolean {
    return this.stopping.stopped;
  }

  /** `alloc`: the version an update hook is given, before the runner takes it. */
  private hookContext(alloc = this.alloc): AllocHookContext {
    return {
      alloc,
      allocDir: this.deps.allocDir,
      stopping: this.stopping,
      killTasks: (event) => void this.killTasks((runner) => phaseOf(runner) !== "poststop", event),
      // The runner itself: its methods, not objects of closures per running alloc (issue 35).
      health: this,
      network: this,
    };
  }

  /** @internal AllocHealthAccess, for the hooks (hookContext). */
  healthRecord(): AllocHealth | undefined {
    return this.local.health;
  }

  /** @internal AllocHealthAccess, for the hooks (hookContext). */
  recordHealth(healthy: boolean): void {
    this.local.health = { deploymentId: this.alloc.DeploymentID, healthy, timestamp: new Date().toISOString() };
    this.deps.store.saveLocal(this.local);
    this.report();
  }

  /** @internal AllocHealthAccess, for the hooks (hookContext). */
  clearHealth(): void {
    if (!this.local.health) return;
    delete this.local.health;
    this.deps.store.saveLocal(this.local);
  }

  /** @internal AllocHealthAccess, for the hooks (hookContext). */
  onTaskStateChange(listener: () => void): () => void {
    return this.taskStateListeners.add(listener);
  }

  /** @internal AllocNetworkAccess, for the hooks (hookContext). */
  networkRecord(): unknown {
    return this.local.network;
  }

  /** @internal AllocNetworkAccess, for the hooks (hookContext). */
  recordNetwork(record: unknown): void {
    if (record === undefined) delete this.local.network;
    else this.local.network = record;
    this.deps.store.saveLocal(this.local);
  }

  private inPhase(phase: Phase): TaskRunner[] {
    return this.tasks.filter((runner) => phaseOf(runner) === phase);
  }

  /**
   * The alloc's whole life, its failure caught here rather than by a `.catch` on it: while the
   * tasks run this is the alloc's one suspended function, waiting on its main tasks' own run
   * promises (issue 35: each pending promise and suspended frame is kept per running alloc).
   */
  private async lifecycle(): Promise<void> {
    try {
      if (this.alloc.DesiredStatus !== "run") {
        // Restored after the server said stop (the agent stopped mid-way): finish
        // the stop; nothing starts, poststop tasks included.
        await this.killTasks(() => true, () => taskEvent(TASK_EVENT.Killing, { KillReason: this.alloc.DesiredDescription || "alloc was stopped" }));
        // What the alloc held on the host (its bridge network) goes as after any end.
        await this.postrun();
        this.report();
        return;
      }
      // The first tasks' drivers get ready (an executor starts) while the alloc dir is made.
      const prestart = this.inPhase("prestart");
      for (const runner of prestart.length > 0 ? prestart : this.inPhase("main")) runner.prepare();
      const setupError = await this.prerun();
      if (setupError === undefined) {
        this.report();
        await this.startTasks();
        await allRun(this.inPhase("main"));
        await this.finishTasks();
      } else {
        // Nothing may run without its alloc dir; a task an earlier agent started is stopped too.
        this.deps.logger.error({ err: setupError, alloc: this.alloc.ID }, "setting up the alloc failed");
        const event = () => taskEvent(TASK_EVENT.SetupFailure, { SetupError: `failed to setup alloc: ${setupError}`, FailsTask: true });
        await this.killTasks(() => true, event);
      }
      await this.postrun();
      this.report();
    } catch (err) {
      this.deps.logger.error({ err, alloc: this.alloc.ID }, "alloc runner failed");
    }
  }

  private async postrun(): Promise<void> {
    for (const hook of this.deps.hooks) {
      try {
        await hook.postrun?.(this.hookContext());
      } catch (err) {
        this.deps.logger.warn({ err, alloc: this.alloc.ID, hook: hook.name }, "postrun hook failed");
      }
    }
  }

  /** Runs the prerun hooks not done yet; the first failure's message, or undefined when all succeeded. */
  private async prerun(): Promise<string | undefined> {
    // Restored with every task dead and its alloc dir gone (an agent killed after the alloc was destroyed,
    // before it left the state DB): nothing will run, so no alloc dir, nor a disk image, is made again.
    // One whose dir is still there goes through (after a reboot its image is mounted again, for its logs).
    if (this.isTerminal && !existsSync(this.deps.allocDir.path)) return undefined;
    const progress = new HookProgress(() => this.deps.store.saveLocal(this.local));
    try {
      for (const hook of this.deps.hooks) {
        // Stopped during set-up: no task starts, so the rest is not needed.
        if (this.killing) return undefined;
        if (this.local.hooks[hook.name]?.done || !hook.prerun) continue;
        let result: { done?: boolean } | void;
        try {
          result = await hook.prerun(this.hookContext());
        } catch (err) {
          return `${hook.name}: ${err instanceof Error ? err.message : String(err)}`;
        }
        if (result?.done) {
          this.local.hooks[hook.name] = PRERUN_DONE;
          progress.changed();
        }
      }
      return undefined;
    } finally {
      // Once they ran, one failed or the kill came: before any task starts.
      progress.flush();
    }
  }

  /** Starts the task runners in lifecycle order: prestart ones first, then main, then poststart; resolves once the last started. */
  private async startTasks(): Promise<void> {
    const prestart = this.inPhase("prestart");
    const main = this.inPhase("main");
    const poststart = this.inPhase("poststart");

    if (!this.killing) {
      for (const runner of prestart) void runner.run();
      await this.until(() =>
        prestart.every((r) => (r.lifecycle?.Sidecar ? r.state.State !== "pending" : r.state.State === "dead")),
      );
      const prestartFailed = prestart.some((r) => r.state.State === "dead" && r.state.Failed);
      if (prestartFailed) await this.killTasks((r) => phaseOf(r) !== "poststop", () => taskEvent(TASK_EVENT.SiblingFailed));
    }
    if (!this.killing) {
      for (const runner of main) void runner.run();
      await this.until(() => main.every((r) => r.state.State !== "pending") || this.killing);
    }
    if (!this.killing) for (const runner of poststart) void runner.run();
  }

  /** The main tasks are dead: the prestart sidecars and poststart tasks are killed, then the poststop ones run; resolves when every one is dead. */
  private async finishTasks(): Promise<void> {
    await this.killTasks(
      (r) => phaseOf(r) === "prestart" || phaseOf(r) === "poststart",
      () => taskEvent(TASK_EVENT.MainDead),
    );
    await allRun([...this.inPhase("prestart"), ...this.inPhase("poststart")]);

    const poststop = this.inPhase("poststop");
    if (!this.destroyed) await allRun(poststop);
    else await Promise.all(poststop.map((r) => r.kill()));
  }

  /**
   * Kills the runners `which` selects (started or not), each with its own
   * event. From here on no lifecycle phase starts anything new.
   */
  private async killTasks(which: (runner: TaskRunner) => boolean, event: () => ReturnType<typeof taskEvent>): Promise<void> {
    this.stopping.stop();
    this.wake();
    await Promise.all(this.tasks.filter(which).map((runner) => runner.kill(event())));
  }

  private onTaskState(name: string, state: TaskState): void {
    burstCollector.touch();
    this.report();
    this.wake();
    this.taskStateListeners.forEach((listener) => listener());
    if (state.State !== "dead" || this.killing) return;
    const runner = this.task(name);
    if (!runner || phaseOf(runner) === "poststop") return;
    // A prestart task that is not a sidecar fails the alloc through the lifecycle gate instead.
    const gated = phaseOf(runner) === "prestart" && !runner.lifecycle?.Sidecar;
    if (state.Failed && !gated) {
      void this.killTasks(
        (r) => r !== runner && phaseOf(r) !== "poststop",
        () => taskEvent(TASK_EVENT.SiblingFailed, { FailedSibling: name }),
      );
    } else if (runner.isLeader) {
      void this.killTasks((r) => r !== runner && phaseOf(r) !== "poststop", () => taskEvent(TASK_EVENT.LeaderDead));
    }
  }

  private report(): void {
    const { status, description } = this.status();
    const health = this.local.health;
    this.deps.report({
      ID: this.alloc.ID,
      ClientStatus: status,
      ClientDescription: description,
      TaskStates: this.taskStates(),
      // The client owns Healthy and Timestamp; Canary and ModifyIndex are the server's, sent back as they are (Nomad's client does the same).
      ...(health
        ? {
            DeploymentStatus: {
              Healthy: health.healthy,
              Timestamp: health.timestamp,
              Canary: this.alloc.DeploymentStatus?.Canary ?? false,
              ModifyIndex: this.alloc.DeploymentStatus?.ModifyIndex ?? 0,
            },
            DeploymentID: health.deploymentId,
          }
        : {}),
    });
  }

  private until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = () => {
        if (!check()) return;
        this.stateWaiters.delete(waiter);
        resolve();
      };
      this.stateWaiters.add(waiter);
    });
  }

  private wake(): void {
    this.stateWaiters.forEach((waiter) => waiter());
  }
}
