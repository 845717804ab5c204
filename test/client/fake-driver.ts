/**
 * An in-memory driver for task and alloc runner tests. A task's command says
 * what it does:
 *   "exit:N"        exits with N at once
 *   "exit:N:MS"     exits with N after MS milliseconds
 *   "run"           runs until stopped or signalled with SIGKILL
 * Every call is recorded, in order, for assertions on lifecycle ordering.
 */
import { DEFAULT_KILL_SIGNAL } from "../../src/lib/signals.ts";
import { taskIdOf, TaskRecoveryError, UnrunnableTaskError, type DriverPlugin, type ExitResult, type TaskConfig, type TaskHandle } from "../../src/drivers/driver.ts";

interface FakeTask {
  config: TaskConfig;
  exited: Promise<ExitResult>;
  exit: (result: ExitResult) => void;
  done: boolean;
}

const result = (exitCode: number, signal = 0): ExitResult => ({ exitCode, signal, oomKilled: false, finishedAt: Date.now() });

export class FakeDriver implements DriverPlugin {
  readonly name = "raw_exec";
  readonly calls: string[] = [];
  /** Every start's config, in order (a task is forgotten once it exits; these are not). */
  readonly started: TaskConfig[] = [];
  readonly tasks = new Map<string, FakeTask>();
  /** Tasks a recovery finds still running (by task id). */
  readonly recoverable = new Set<string>();
  startFailures = 0;
  /** Start failures that no restart can fix (UnrunnableTaskError), as a missing command is. */
  unrunnable = false;

  fingerprint() {
    return { detected: true, healthy: true, description: "Healthy", attributes: {} };
  }

  async startTask(config: TaskConfig): Promise<{ handle: TaskHandle }> {
    const id = taskIdOf(config.allocId, config.taskName);
    this.calls.push(`start ${config.taskName}`);
    this.started.push(config);
    if (this.unrunnable) throw new UnrunnableTaskError(`command "${config.command}" does not exist`);
    if (this.startFailures > 0) {
      this.startFailures--;
      throw new Error(`cannot start ${config.command}`);
    }
    let exit!: (r: ExitResult) => void;
    const exited = new Promise<ExitResult>((resolve) => (exit = resolve));
    const task: FakeTask = { config, exited, exit: (r) => ((task.done = true), exit(r)), done: false };
    this.tasks.set(id, task);
    const [kind, code, after] = (config.command ?? "").split(":");
    if (kind === "exit") setTimeout(() => task.exit(result(Number(code))), Number(after ?? 0));
    return { handle: this.handleFor(config) };
  }

  handleFor(config: Pick<TaskConfig, "allocId" | "taskName">): TaskHandle {
    return {
      version: 1,
      driver: this.name,
      allocId: config.allocId,
      taskName: config.taskName,
      executor: { pid: 1, startTime: 1, socket: "/nonexistent.sock", exitFile: "/nonexistent.json", log: "/nonexistent.log", protocol: 1, drover: "test" },
      task: { pid: 1, startTime: 1 },
      cgroup: null,
      killSignal: "SIGTERM",
      startedAt: Date.now(),
    };
  }

  async recoverTask(handle: TaskHandle): Promise<void> {
    const id = taskIdOf(handle.allocId, handle.taskName);
    this.calls.push(`recover ${handle.taskName}`);
    if (!this.recoverable.has(id)) throw new TaskRecoveryError("executor gone");
    let exit!: (r: ExitResult) => void;
    const exited = new Promise<ExitResult>((resolve) => (exit = resolve));
    const task: FakeTask = {
      config: { allocId: handle.allocId, taskName: handle.taskName, command: "run", env: {}, cwd: "/", stdoutPath: "/x", stderrPath: "/y", resources: { cpuMhz: 100, memoryMb: 10, memoryMaxMb: 0 } } as TaskConfig,
      exited,
      exit: (r) => ((task.done = true), exit(r)),
      done: false,
    };
    this.tasks.set(id, task);
  }

  waitTask(taskId: string): Promise<ExitResult> {
    return this.must(taskId).exited;
  }

  async stopTask(taskId: string, _timeoutMs: number, signal?: string): Promise<void> {
    const task = this.must(taskId);
    // As the executor drivers do: no signal named is the task's own (its kill_signal, else Nomad's default).
    this.calls.push(`stop ${task.config.taskName} ${signal ?? task.config.killSignal ?? DEFAULT_KILL_SIGNAL}`);
    if (!task.done) task.exit(result(130, 2));
    await task.exited;
  }

  async destroyTask(taskId: string): Promise<void> {
    this.tasks.delete(taskId);
  }

  inspectTask(): never {
    throw new Error("not used");
  }

  async signalTask(taskId: string, signal: string): Promise<void> {
    const task = this.must(taskId);
    this.calls.push(`signal ${task.config.taskName} ${signal}`);
    if (signal === "SIGKILL") task.exit(result(137, 9));
  }

  async execTask(): Promise<never> {
    throw new Error("not used");
  }

  async execStreamTask(): Promise<never> {
    throw new Error("not used");
  }

  async taskStats(): Promise<never> {
    throw new Error("no stats in tests");
  }


  /** Makes a running task exit as if it ended on its own. */
  finish(allocId: string, taskName: string, exitCode: number): void {
    this.must(taskIdOf(allocId, taskName)).exit(result(exitCode));
  }

  private must(taskId: string): FakeTask {
    const task = this.tasks.get(taskId);
    if (!task) throw new Error(`no fake task ${taskId}`);
    return task;
  }
}
