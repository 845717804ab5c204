/**
 * What a task runner's hook phase is given (hooks/hook.ts's TaskHookContext):
 * the alloc and task as they are when the phase begins, the rest through the
 * runner. Its methods live on the prototype and the kill signal is asked of
 * the runner when a hook reads it: before, every running task held a context
 * with five closures and two getters, and an AbortController made at its start
 * (~0.6 KiB outside the JavaScript heap) that most tasks' hooks never read
 * (issue 35: the agent's memory per task).
 */
import type { ExecResult } from "../../drivers/driver.ts";
import type { Allocation } from "../../structs/alloc.ts";
import type { Task } from "../../structs/job.ts";
import type { TaskEvent } from "../../structs/task-state.ts";
import type { AllocDir, TaskDirPaths } from "../allocdir/alloc-dir.ts";
import type { TaskEnv } from "../taskenv/builder.ts";
import type { TaskHookContext } from "./hooks/hook.ts";

/** What a request reaches of its runner. */
export interface HookRunner {
  /** Made when first read: aborted once the task is being killed. */
  readonly killed: AbortSignal;
  emitEvent(event: TaskEvent): void;
  taskEnv(): TaskEnv;
  restart(reason: string, failure: boolean): Promise<void>;
  signal(signal: string, reason: string): Promise<void>;
  exec(argv: readonly string[], timeoutMs: number): Promise<ExecResult>;
}

export class HookRequest implements TaskHookContext {
  constructor(
    private readonly runner: HookRunner,
    readonly alloc: Allocation,
    readonly task: Task,
    readonly allocDir: AllocDir,
    readonly taskDir: TaskDirPaths,
  ) {}

  get killed(): AbortSignal {
    return this.runner.killed;
  }

  emitEvent(event: TaskEvent): void {
    this.runner.emitEvent(event);
  }

  taskEnv(): TaskEnv {
    return this.runner.taskEnv();
  }

  restartTask(reason: string, failure: boolean): Promise<void> {
    return this.runner.restart(reason, failure);
  }

  signalTask(signal: string, reason: string): Promise<void> {
    return this.runner.signal(signal, reason);
  }

  execInTask(argv: readonly string[], timeoutMs: number): Promise<ExecResult> {
    return this.runner.exec(argv, timeoutMs);
  }
}
