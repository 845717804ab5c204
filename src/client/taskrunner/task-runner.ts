/**
 * Runs one task of an allocation for its whole life: hooks, the driver, the
 * restart policy, kills, signals, and the state the API shows.
 *
 *            ┌──────────────────────────────── restart (policy or operator) ◄─┐
 *            ▼                                                                 │
 *   prestart hooks ──> driver.startTask ──> persist handle ──> poststart hooks │
 *     │ failure: Setup Failure                 │ Started, running              │
 *     ▼                                        ▼                               │
 *   restart policy                      waitTask (shared result) ──> exited hooks (logs flushed)
 *                                              │ Terminated                    │
 *                                              ▼                               │
 *                                    destroy driver task ──> restart policy ───┘
 *                                                                │ not restarting / done / killed
 *                                                                ▼
 *                                                  stop hooks ──> dead (Killed | Not Restarting)
 *
 *   kill():    Killing ─> stopTask(kill_timeout, kill_signal) ─> the wait above ends ─> Killed, dead
 *   restore(): the persisted state and handle come back; a live task is reattached and the
 *              loop resumes at the wait, so nothing runs twice.
 */
import type { Logger } from "../../lib/logger.ts";
import { splitDriverConfig } from "../../structs/driver-config.ts";
import type { DriverName } from "../../structs/job.ts";
import { taskIdOf, TaskRecoveryError, UnrunnableTaskError, type DriverPlugin, type ExecResult, type ExecSession, type ExitResult, type TaskConfig, type TaskHandle } from "../../drivers/driver.ts";
import { parseStoredHandle } from "../../drivers/handle.ts";
import type { StoredTask, TaskStore } from "../../state/client/allocs.ts";
import type { TaskLocalState } from "../../state/client/local-state.ts";
import { allocTask, type Allocation } from "../../structs/alloc.ts";
import { NS_PER_MS } from "../../lib/units.ts";
import type { Task } from "../../structs/job.ts";
import { TASK_EVENT, type TaskEvent, type TaskState } from "../../structs/task-state.ts";
import type { AllocDir, TaskDirPaths } from "../allocdir/alloc-dir.ts";
import { buildTaskEnv, type TaskEnv, type TaskEnvInput } from "../taskenv/builder.ts";
import { UnrecoverableHookError, type PrestartResponse, type TaskHook } from "./hooks/hook.ts";
import { HookRequest, type HookRunner } from "./hook-request.ts";
import { RestartTracker, type RestartDecision } from "./restarts.ts";
import { newTaskState, taskEvent, TaskStateTracker, type TaskStateSink } from "./task-state.ts";
import { groupNetwork } from "../network/task-network.ts";
import { HookProgress } from "../hook-progress.ts";

export interface TaskRunnerDeps {
  alloc: Allocation;
  task: Task;
  allocDir: AllocDir;
  taskDir: TaskDirPaths;
  driver: DriverPlugin;
  hooks: readonly TaskHook[];
  store: TaskStore;
  logger: Logger;
  /** Everything the environment needs except the task's own block, which comes from `task`. */
  envInput: (alloc: Allocation, task: Task, allocDir: AllocDir) => Omit<TaskEnvInput, "task">;
  stdio: { stdoutPath: string; stderrPath: string };
  cgroupParent: string;
  /** client.max_kill_timeout: no task waits longer between its kill signal and SIGKILL. */
  maxKillTimeoutMs: number;
  onStateChange: (taskName: string, state: TaskState) => void;
  /** The alloc's bridge address, once the network hook attached it. */
  allocAddress?: (allocId: string) => string | undefined;
  /** What the store holds for the task, already read (a new alloc's, or a whole node's at restore); read from the store when absent. */
  stored?: StoredTask;
}

class Killed extends Error {}

/**
 * A prestart hook's progress without data, one object for every task: a task's local state keeps
 * an entry per hook while it runs (issue 35: the agent's memory per task). Entries are replaced,
 * never changed, so sharing them is safe.
 */
const HOOK_DONE = Object.freeze({ done: true });
const HOOK_NOT_DONE = Object.freeze({ done: false });

/** An action that needs the task running (signal, exec) found it not running. */
export class TaskNotRunningError extends Error {
  override name = "TaskNotRunningError";
  constructor(task: string) {
    super(`task "${task}" is not running`);
  }
}

export class TaskRunner implements HookRunner, TaskStateSink {
  private alloc: Allocation;
  private task: Task;
  private readonly tracker: TaskStateTracker;
  private local: TaskLocalState;
  /**
   * The stored handle, until restore() reattached with it or let it go. A running task's handle
   * is the driver's and the row's, not held here too (issue 35: what a running task keeps).
   */
  private handle: TaskHandle | null;
  private readonly handleProblem: string | undefined;
  private readonly restarts: RestartTracker;
  private runPromise: Promise<void> | undefined;
  private killEvent: TaskEvent | undefined;
  /** Aborted with the kill: what hooks watch to give up their waits. Made when a hook first asks for it (hook-request.ts). */
  private killController: AbortController | undefined;
  private readonly killWaiters: (() => void)[] = [];
  private restartRequest: { failure: boolean } | undefined;
  /** How the task ended, when restore() finds it ended and nothing was decided yet. */
  private exitToDecide: ExitResult | undefined;
  private running = false;

  private readonly deps: Omit<TaskRunnerDeps, "stored">;

  constructor({ stored: storedTask, ...deps }: TaskRunnerDeps) {
    // What was stored is read here only: the runner keeps its deps while the task runs, not its first state.
    this.deps = deps;
    this.alloc = deps.alloc;
    this.task = deps.task;
    const saved = storedTask ?? deps.store.load();
    this.local = saved.local ?? { hooks: {} };
    const stored = parseStoredHandle(saved.handleJson);
    this.handle = stored.handle;
    this.handleProblem = stored.problem;
    // The runner is the tracker's sink: its methods, not three closures per running task (issue 35).
    this.tracker = new TaskStateTracker(saved.state ?? newTaskState(), this);
    this.restarts = new RestartTracker(this.task.RestartPolicy, this.alloc.Job.Type, this.task.Lifecycle);
    if (this.local.restarts) this.restarts.restore(this.local.restarts);
    if (!saved.state) this.tracker.appendEvent(taskEvent(TASK_EVENT.Received));
    // A kill that an earlier agent began is finished, never undone.
    if (this.local.killReason !== undefined) this.markKilled(taskEvent(TASK_EVENT.Killing, { KillReason: this.local.killReason }));
  }

  /** The namespace of the task's alloc, for the ACL checks on exec. */
  get namespace(): string {
    return this.alloc.Namespace;
  }

  /** The task's driver (exec into a driver without filesystem isolation needs alloc-node-exec). */
  get driver(): string {
    return this.task.Driver;
  }

  get name(): string {
    return this.task.Name;
  }

  get state(): TaskState {
    return this.tracker.state;
  }

  get taskId(): string {
    return taskIdOf(this.alloc.ID, this.task.Name);
  }

  /** True while a driver task exists for this task (started or reattached). */
  get isRunning(): boolean {
    return this.running;
  }

  get lifecycle(): Task["Lifecycle"] {
    return this.task.Lifecycle;
  }

  get isLeader(): boolean {
    return this.task.Leader;
  }

  /**
   * The task will be started soon (its alloc is being set up): its driver may
   * get ready meanwhile. Nothing for a task that ran already (restored).
   */
  prepare(): void {
    if (this.handle === null && this.state.State === "pending") this.deps.driver.prepare?.();
  }

  /** Starts the task's life; resolves when it is dead for good. Idempotent. */
  run(): Promise<void> {
    this.runPromise ??= this.loop();
    return this.runPromise;
  }

  /**
   * Brings back a task started by an earlier agent. Call before run(): a task
   * that is still running is reattached and run() only waits for it; one that
   * ended while the agent was away reports its real exit status.
   */
  async restore(): Promise<void> {
    if (this.state.State === "dead") {
      this.runPromise = Promise.resolve();
      return;
    }
    if (!this.handle) {
      // A handle this binary cannot read (another version's, a damaged row) may name a live task: say so.
      if (this.handleProblem !== undefined) this.reattachFailed(`stored handle unusable: ${this.handleProblem}`);
      // Else the task ended and its handle was let go. A restart already decided is only waited
      // out (run() sleeps until restartAt); otherwise the agent stopped before deciding, and the
      // decision is made now from the recorded exit: either way the end is counted once.
      else if (this.local.restartAt === undefined) this.exitToDecide = this.local.lastExit;
      return;
    }
    if (this.local.lastExit) {
      // The end was recorded, the handle not yet let go: there is nothing to reattach to.
      await this.releaseEndedTask();
      this.exitToDecide = this.local.lastExit;
      return;
    }
    try {
      await this.deps.driver.recoverTask(this.handle);
      this.running = true;
      this.deps.logger.info({ pid: this.handle.task.pid }, "reattached to task");
      this.handle = null;
      // The last agent saved the handle and stopped before it could record the start.
      if (this.state.State !== "running") this.tracker.updateState("running", taskEvent(TASK_EVENT.Started));
    } catch (err) {
      this.reattachFailed(err instanceof TaskRecoveryError ? err.message : String(err));
    }
  }

  /** Frees what a task whose end is already recorded may have left (its executor waits to be destroyed). */
  private async releaseEndedTask(): Promise<void> {
    try {
      await this.deps.driver.recoverTask(this.handle!);
      await this.deps.driver.destroyTask(this.taskId, true);
    } catch (err) {
      // Its executor is gone already: the usual case, nothing to report.
      this.deps.logger.debug({ err: String(err) }, "ended task left nothing to release");
    }
    this.forgetHandle();
  }

  /** The restored task cannot be reached: recorded, and the restart policy decides from how it last ended. */
  private reattachFailed(reason: string): void {
    this.deps.logger.warn({ reason }, "could not reattach to task");
    this.tracker.emitEvent(taskEvent(TASK_EVENT.DriverFailure, { DriverError: `failed to reattach: ${reason}` }));
    this.exitToDecide = this.local.lastExit ?? { exitCode: -1, signal: 0, oomKilled: false, err: `failed to reattach: ${reason}`, finishedAt: Date.now() };
    this.forgetHandle();
  }

  /** Stops the task for good (Nomad's Kill); resolves once it is dead. */
  async kill(event: TaskEvent = taskEvent(TASK_EVENT.Killing)): Promise<void> {
    if (this.state.State === "dead" && !this.running) return;
    if (!this.killEvent) {
      this.markKilled(event);
      this.local.killReason = event.KillReason ?? "";
      try {
        this.deps.store.saveLocal(this.local);
      } catch (err) {
        // Stopping must not depend on the disk: the server's stop is recorded, so a restored runner kills again.
        this.deps.logger.error({ err }, "recording the kill failed; killing the task anyway");
      }
      const timeoutMs = this.killTimeoutMs();
      this.tracker.emitEvent({ ...event, KillTimeout: timeoutMs * NS_PER_MS });
      for (const wake of this.killWaiters.splice(0)) wake();
      if (this.running) {
        await this.beforeKill();
        await this.stopDriverTask(timeoutMs);
      }
    }
    await this.run();
  }

  /**
   * Nomad's shutdown_delay: the task's services are deregistered first, then
   * it keeps running for the delay so clients stop sending it work, and only
   * then gets its kill signal.
   */
  private async beforeKill(): Promise<void> {
    for (const hook of this.deps.hooks) {
      try {
        await hook.preKill?.(this.request());
      } catch (err) {
        this.deps.logger.warn({ err, hook: hook.name }, "pre-kill hook failed");
      }
    }
    const delayMs = this.task.ShutdownDelay / NS_PER_MS;
    if (delayMs > 0) await new Promise((done) => setTimeout(done, delayMs));
  }

  private markKilled(event: TaskEvent): void {
    this.killEvent = event;
    this.killController?.abort(this.killReason());
  }

  /** Restarts a running task now, outside the restart policy (an operator's restart). */
  async restart(reason: string, failure = false): Promise<void> {
    if (!this.running || this.killEvent) return;
    this.restartRequest = { failure };
    this.tracker.emitEvent(taskEvent(TASK_EVENT.RestartSignal, { RestartReason: reason }));
    await this.stopDriverTask(this.killTimeoutMs());
  }

  async signal(signal: string, reason = ""): Promise<void> {
    if (!this.running) throw new TaskNotRunningError(this.task.Name);
    this.tracker.emitEvent(taskEvent(TASK_EVENT.Signaling, { TaskSignal: signal, TaskSignalReason: reason }));
    await this.deps.driver.signalTask(this.taskId, signal);
  }

  /** Runs a command in the task's context (an exec task's namespaces and cgroup). */
  async exec(argv: readonly string[], timeoutMs: number): Promise<ExecResult> {
    if (!this.running) throw new TaskNotRunningError(this.task.Name);
    return this.deps.driver.execTask(this.taskId, argv, timeoutMs);
  }

  /** Starts an interactive session in the task's context; the caller owns its streams. */
  async execStream(argv: readonly string[], tty: boolean): Promise<ExecSession> {
    if (!this.running) throw new TaskNotRunningError(this.task.Name);
    return this.deps.driver.execStreamTask(this.taskId, argv, tty);
  }

  /** The alloc changed while the task runs (not a stop): later phases see the new version. */
  update(alloc: Allocation): void {
    this.alloc = alloc;
    this.task = allocTask(alloc, this.task.Name) ?? this.task;
  }

  /** The agent is stopping: hooks let go of what they hold; the task keeps running. */
  async shutdown(): Promise<void> {
    for (const hook of this.deps.hooks) await hook.shutdown?.();
  }

  private killTimeoutMs(): number {
    return Math.min(this.task.KillTimeout / NS_PER_MS, this.deps.maxKillTimeoutMs);
  }

  private async stopDriverTask(timeoutMs: number): Promise<void> {
    try {
      // No kill_signal: the one the driver recorded in the task's handle.
      await this.deps.driver.stopTask(this.taskId, timeoutMs, this.task.KillSignal || undefined);
    } catch (err) {
      this.deps.logger.warn({ err }, "stopping the task failed");
    }
  }

  /** A hook phase's request (hook-request.ts): the alloc and task as they are now. */
  private request(): HookRequest {
    return new HookRequest(this, this.alloc, this.task, this.deps.allocDir, this.deps.taskDir);
  }

  /** For the hooks (hook-request.ts): made when first asked for, aborted already when the kill came first. */
  get killed(): AbortSignal {
    if (!this.killController) {
      this.killController = new AbortController();
      if (this.killEvent) this.killController.abort(this.killReason());
    }
    return this.killController.signal;
  }

  private killReason(): Error {
    return new Error(`task "${this.task.Name}" is being killed`);
  }

  /** @internal the state tracker's sink: the runner's local state rides along, so an event and the decision behind it persist together. */
  persistState(state: TaskState): void {
    this.deps.store.saveState(state, this.local);
  }

  /** @internal the state tracker's sink: a task's life goes on when its state cannot be written (a full disk); the next write catches up. */
  persistStateFailed(err: unknown): void {
    this.deps.logger.error({ err }, "recording the task's state failed; it is kept in memory until a write succeeds");
  }

  /** @internal the state tracker's sink */
  stateChanged(state: TaskState): void {
    this.deps.onStateChange(this.task.Name, state);
  }

  /** For the hooks: records an event on the task (persisted and reported). */
  emitEvent(event: TaskEvent): void {
    this.tracker.emitEvent(event);
  }

  /** For the hooks: the task's environment as it starts now. */
  taskEnv(): TaskEnv {
    return this.buildEnv({});
  }

  /** The task's environment, with what prestart hooks added (a template's env). */
  private buildEnv(hookEnv: Record<string, string>): TaskEnv {
    const envInput = this.deps.envInput(this.alloc, this.task, this.deps.allocDir);
    return buildTaskEnv({ ...envInput, task: { name: this.task.Name, env: { ...this.task.Env, ...hookEnv }, ...this.resources() } });
  }

  /**
   * What the server allocated to this task, in the units the driver and the
   * task's environment use: as Nomad's client, the alloc's AllocatedResources
   * (which also hold its disk, devices and ports), not the job's ask.
   */
  private resources(): { cpuMhz: number; memoryMb: number; memoryMaxMb: number } {
    const allocated = this.alloc.AllocatedResources.Tasks[this.task.Name];
    if (!allocated) throw new Error(`alloc ${this.alloc.ID} has no resources allocated to task "${this.task.Name}"`);
    return { cpuMhz: allocated.Cpu.CpuShares, memoryMb: allocated.Memory.MemoryMB, memoryMaxMb: allocated.Memory.MemoryMaxMB };
  }

  /**
   * The task's whole life, its failure caught here rather than by a `.catch` on it: while the task
   * runs this is the one suspended function, waiting on the driver's own exit promise (issue 35:
   * each pending promise and suspended frame a running task holds is kept by the agent per task).
   */
  private async loop(): Promise<void> {
    try {
      let failed = false;
      if (this.running) {
        await this.poststart();
        // Restored mid-kill: the stop request may have died with the last agent.
        if (this.killEvent) await this.stopDriverTask(this.killTimeoutMs());
      }
      try {
        let decision: RestartDecision | undefined = this.exitToDecide ? this.decideAfterExit(this.exitToDecide) : undefined;
        while (!decision || (await this.afterDecision(decision))) {
          if (this.killEvent && !this.running) throw new Killed();
          if (!this.running) {
            const started = await this.prepareAndStart();
            if (!started.ok) {
              decision = this.restarts.failedToStart(started.recoverable).decide();
              continue;
            }
          }
          const result = await this.deps.driver.waitTask(this.taskId);
          decision = this.decideAfterExit(await this.afterExit(result));
        }
        failed = decision.kind === "not-restarting";
      } catch (err) {
        if (!(err instanceof Killed)) throw err;
      }
      for (const hook of this.deps.hooks) {
        try {
          await hook.stop?.(Object.assign(this.request(), { final: true }));
        } catch (err) {
          this.deps.logger.warn({ err, hook: hook.name }, "stop hook failed");
        }
      }
      const final = this.killEvent ? taskEvent(TASK_EVENT.Killed) : undefined;
      this.tracker.updateState("dead", final, { failed });
    } catch (err) {
      this.running = false;
      this.deps.logger.error({ err }, "task runner failed");
      this.tracker.updateState("dead", taskEvent(TASK_EVENT.DriverFailure, { DriverError: String(err), FailsTask: true }));
    }
  }

  /** Waits out a decided restart's delay, runs the prestart hooks and starts the task; false when either failed (the events say why). */
  private async prepareAndStart(): Promise<{ ok: true } | { ok: false; recoverable: boolean }> {
    if (this.local.restartAt !== undefined) {
      await this.sleepUnlessKilled(Math.max(0, this.local.restartAt - Date.now()));
      if (this.killEvent) throw new Killed();
    }
    this.deps.driver.prepare?.();
    const hookEnv: Record<string, string> = {};
    const hookDevices: NonNullable<PrestartResponse["devices"]> = [];
    const hookMounts: NonNullable<PrestartResponse["mounts"]> = [];
    const hookVolumes: NonNullable<PrestartResponse["volumes"]> = [];
    const progress = new HookProgress(() => this.deps.store.saveLocal(this.local));
    try {
      for (const hook of this.deps.hooks) {
        if (!hook.prestart) continue;
        const saved = this.local.hooks[hook.name];
        if (saved?.done) continue;
        try {
          const response = await hook.prestart(Object.assign(this.request(), { previous: saved?.data }));
          if (response) {
            Object.assign(hookEnv, response.env ?? {});
            hookDevices.push(...(response.devices ?? []));
            hookMounts.push(...(response.mounts ?? []));
            hookVolumes.push(...(response.volumes ?? []));
            this.local.hooks[hook.name] = response.data === undefined ? (response.done ? HOOK_DONE : HOOK_NOT_DONE) : { done: response.done ?? false, data: response.data };
            progress.changed();
          }
        } catch (err) {
          // A hook that gave up because of the kill did not fail: the kill goes on.
          if (this.killEvent) throw new Killed();
          const recoverable = !(err instanceof UnrecoverableHookError);
          const message = `${hook.name}: ${err instanceof Error ? err.message : String(err)}`;
          const event = err instanceof UnrecoverableHookError ? err.event : undefined;
          this.tracker.emitEvent(event ?? taskEvent(TASK_EVENT.SetupFailure, { SetupError: message, FailsTask: !recoverable }));
          return { ok: false, recoverable };
        }
        if (this.killEvent) throw new Killed();
      }
    } finally {
      // Once they ran, one failed or the kill came: before the driver starts anything.
      progress.flush();
    }

    const env = this.buildEnv(hookEnv);
    // The validate hook refused a driver or config drover cannot run; this cannot fail after it.
    const { command, args, rest: driverConfig } = splitDriverConfig(this.task.Driver as DriverName, this.task.Config);
    const config: TaskConfig = {
      allocId: this.alloc.ID,
      taskName: this.task.Name,
      ...(command === undefined ? {} : { command: env.interpolate(command) }),
      args: args.map((arg) => env.interpolate(arg)),
      env: env.env,
      cwd: this.deps.taskDir.root,
      ...(this.task.User ? { user: this.task.User } : {}),
      stdoutPath: this.deps.stdio.stdoutPath,
      stderrPath: this.deps.stdio.stderrPath,
      resources: this.resources(),
      cgroupParent: this.deps.cgroupParent,
      // None given: the driver's own default (docker: the image's StopSignal).
      ...(this.task.KillSignal ? { killSignal: this.task.KillSignal } : {}),
      allocDir: this.deps.allocDir.shared,
      ...groupNetwork(this.alloc, () => this.deps.allocAddress?.(this.alloc.ID), env.interpolate),
      devices: hookDevices,
      mounts: hookMounts,
      volumes: hookVolumes,
      // Every text in it interpolated, as Nomad does (image = "app:${NOMAD_META_version}"); the driver checks its own keys.
      driverConfig: interpolateTexts(driverConfig, env.interpolate),
    };
    // The last run's end is decided by now. Forgotten before the start, so that
    // a restored runner never pairs a new run's handle with the old run's exit.
    if (this.local.lastExit || this.local.restartAt !== undefined) {
      delete this.local.lastExit;
      delete this.local.restartAt;
      this.deps.store.saveLocal(this.local);
    }
    try {
      const { handle } = await this.deps.driver.startTask(config, (message) => this.tracker.emitEvent(taskEvent(TASK_EVENT.DriverMessage, { DriverMessage: message })));
      // Persisted whole; the driver holds it (without the launch request, which it reads back from the row).
      this.deps.store.saveHandle(handle);
      this.running = true;
    } catch (err) {
      if (this.killEvent) throw new Killed();
      const message = err instanceof Error ? err.message : String(err);
      const recoverable = !(err instanceof UnrunnableTaskError);
      this.tracker.emitEvent(taskEvent(TASK_EVENT.DriverFailure, { DriverError: message, FailsTask: !recoverable }));
      return { ok: false, recoverable };
    }
    this.tracker.updateState("running", taskEvent(TASK_EVENT.Started));
    // A kill that arrived while the driver was starting found nothing to stop yet.
    if (this.killEvent) await this.stopDriverTask(this.killTimeoutMs());
    await this.poststart();
    return { ok: true };
  }

  /** The task runs (started, or reattached after an agent restart): hooks that follow it begin. */
  private async poststart(): Promise<void> {
    for (const hook of this.deps.hooks) {
      try {
        await hook.poststart?.(Object.assign(this.request(), { taskId: this.taskId }));
      } catch (err) {
        this.deps.logger.warn({ err, hook: hook.name }, "poststart hook failed");
      }
    }
  }

  /** The task ended: runs the exited hooks, records Terminated, frees the driver task. */
  private async afterExit(result: ExitResult): Promise<ExitResult> {
    if (result.err) this.tracker.emitEvent(taskEvent(TASK_EVENT.DriverFailure, { DriverError: result.err }));
    for (const hook of this.deps.hooks) {
      try {
        await hook.exited?.(Object.assign(this.request(), { taskId: this.taskId, result }));
      } catch (err) {
        this.deps.logger.warn({ err, hook: hook.name }, "exited hook failed");
      }
    }
    // Persisted with the Terminated event: a restored runner never records this end twice.
    this.local.lastExit = result;
    this.tracker.emitEvent(
      taskEvent(TASK_EVENT.Terminated, {
        ExitCode: result.exitCode,
        Signal: result.signal,
        Message: result.oomKilled ? "OOM Killed" : (result.err ?? ""),
        Details: {
          exit_code: String(result.exitCode),
          signal: String(result.signal),
          oom_killed: String(result.oomKilled),
          ...(result.err ? { err: result.err } : {}),
        },
      }),
    );
    try {
      await this.deps.driver.destroyTask(this.taskId, true);
    } catch (err) {
      this.deps.logger.warn({ err }, "destroying the driver task failed");
    }
    this.forgetHandle();
    return result;
  }

  private forgetHandle(): void {
    this.running = false;
    this.handle = null;
    this.deps.store.deleteHandle();
  }

  private decideAfterExit(result: ExitResult): RestartDecision {
    if (this.killEvent) return this.restarts.killed().decide();
    const request = this.restartRequest;
    this.restartRequest = undefined;
    if (request) return this.restarts.restartRequested(request.failure).decide();
    return this.restarts.exited(result.exitCode === 0 && !result.oomKilled && !result.err).decide();
  }

  /** Records the decision (with the count behind it); true when the loop should start the task again. */
  private async afterDecision(decision: RestartDecision): Promise<boolean> {
    this.local.restarts = this.restarts.snapshot();
    switch (decision.kind) {
      case "killed":
        return false;
      case "terminated":
        return false;
      case "not-restarting":
        this.tracker.emitEvent(taskEvent(TASK_EVENT.NotRestarting, { RestartReason: decision.reason, FailsTask: true }));
        return false;
      case "restart":
        // The exit is decided: a restored runner waits out the rest of the delay instead of deciding again.
        this.local.restartAt = Date.now() + decision.delayMs;
        delete this.local.lastExit;
        this.tracker.updateState(
          "pending",
          taskEvent(TASK_EVENT.Restarting, { RestartReason: decision.reason, StartDelay: Math.round(decision.delayMs * NS_PER_MS) }),
        );
        return !this.killEvent;
    }
  }

  private sleepUnlessKilled(ms: number): Promise<void> {
    if (this.killEvent) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.killWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** `value` with every string in it (at any depth) passed through `interpolate`. */
function interpolateTexts<T>(value: T, interpolate: (text: string) => string): T {
  if (typeof value === "string") return interpolate(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => interpolateTexts(item, interpolate)) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateTexts(item, interpolate)])) as T;
  }
  return value;
}
