/**
 * Task runner hooks: small named objects with optional phase methods, each
 * phase a request/response pair, as in Nomad's client.
 *
 *   prestart ──> (driver starts the task) ──> poststart ──> exited ──> stop
 *      ▲                                                      │
 *      └────────────────────── restart ◄──────────────────────┘
 *   preKill: a kill is coming; runs before shutdown_delay and the kill signal
 *   shutdown: the agent is stopping; the task keeps running
 *
 * A prestart hook that answers `done` is skipped when the runner is
 * restored after an agent restart; its `data` is persisted with the task's
 * local state and handed back on the next prestart.
 */
import type { AllocDir, TaskDirPaths } from "../../allocdir/alloc-dir.ts";
import type { Allocation } from "../../../structs/alloc.ts";
import type { Task } from "../../../structs/job.ts";
import type { TaskEvent } from "../../../structs/task-state.ts";
import type { HookData } from "../../../state/client/local-state.ts";
import type { ExitResult } from "../../../structs/exit-result.ts";
import type { DeviceMount, DeviceNode } from "../../../devices/plugin.ts";
import type { TaskEnv } from "../../taskenv/builder.ts";
import type { ExecResult, VolumeBind } from "../../../drivers/driver.ts";

export type { HookData };

/** What every phase may look at. */
export interface TaskHookContext {
  alloc: Allocation;
  task: Task;
  allocDir: AllocDir;
  taskDir: TaskDirPaths;
  /** Records an event on the task (EmitEvent: persisted and reported). */
  emitEvent(event: TaskEvent): void;
  /**
   * Aborted once the task is being killed (Nomad's context for a hook): a
   * hook that waits (a download, a render, a check) gives up at once rather
   * than holding the kill until it finishes.
   */
  killed: AbortSignal;
  /** The task's environment as it starts now (Nomad's variables, node attributes, its env block). */
  taskEnv(): TaskEnv;
  /** Restarts the running task (a template re-rendered, a check failed); `failure` counts against the restart policy. */
  restartTask(reason: string, failure: boolean): Promise<void>;
  /** Sends the running task a signal (a template's change_signal). */
  signalTask(signal: string, reason: string): Promise<void>;
  /** Runs a command in the running task's context (a script check). */
  execInTask(argv: readonly string[], timeoutMs: number): Promise<ExecResult>;
}

export interface PrestartRequest extends TaskHookContext {
  /** What this hook returned as `data` last time, if anything. */
  previous: HookData | undefined;
}

export interface PrestartResponse {
  /** Skip this hook when the runner is restored. */
  done?: boolean;
  data?: HookData;
  /** Variables this hook adds to the task's environment. */
  env?: Record<string, string>;
  /** Device nodes an isolated task gets in its /dev (drivers without isolation use the host's). */
  devices?: DeviceNode[];
  /** Host paths bound into an isolated task's root. */
  mounts?: DeviceMount[];
  /** Host volumes an isolated task's driver binds into its root. */
  volumes?: VolumeBind[];
}

export interface PoststartRequest extends TaskHookContext {
  taskId: string;
}

export interface ExitedRequest extends TaskHookContext {
  taskId: string;
  result: ExitResult;
}

export interface StopRequest extends TaskHookContext {
  /** Whether the task ended for good (false before a restart). */
  final: boolean;
}

export interface TaskHook {
  readonly name: string;
  prestart?(req: PrestartRequest): Promise<PrestartResponse | void>;
  poststart?(req: PoststartRequest): Promise<void>;
  exited?(req: ExitedRequest): Promise<void>;
  stop?(req: StopRequest): Promise<void>;
  /** The task is about to be killed for good: before shutdown_delay and the kill signal (services deregister). */
  preKill?(req: TaskHookContext): Promise<void>;
  shutdown?(): Promise<void>;
}

/**
 * A hook failure that retrying cannot fix (bad config); the task is not
 * restarted. `event` replaces the runner's generic Setup Failure event.
 */
export class UnrecoverableHookError extends Error {
  override name = "UnrecoverableHookError";
  constructor(
    message: string,
    readonly event?: TaskEvent,
  ) {
    super(message);
  }
}
