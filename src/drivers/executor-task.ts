/**
 * The agent's view of one task under its executor: the executor's shared
 * link, the one long `wait` call whose answer every waiter shares, and what
 * happens when the executor goes away. Every call names the task by its key
 * (a protocol-1 handle has none: its executor has only this task).
 *
 *   attached ──wait answers──────────────────────────────> exited (result from the executor)
 *      │
 *      └─connection lost──> exit file there?  ──yes──────> exited (result from the file)
 *                              │ no
 *                           executor process alive? ──yes─> reconnect (shared by the executor's
 *                              │                            tasks), attached again
 *                              │ no (pid gone or start time differs)
 *                           rescue (the driver): the task lives on as the host reaper's child
 *                              │  ──> another executor adopts it ─> attached again (new handle)
 *                              │  it ended meanwhile ──> exited (status from the reaper)
 *                              │ neither (its parent is init: no reaper above its executor)
 *                           empty the task's cgroup ──────> exited, err "executor died"
 *
 * The stored executor pid is never signalled: it is only looked at in /proc.
 */
import { emptyCgroup, openTaskCgroup } from "../cgroups/task-cgroup.ts";
import { signalEach } from "../cgroups/signal.ts";
import { isAlive } from "../stats/process.ts";
import type { ExecutorConnection } from "../executor/client.ts";
import { executorFiles, readExitResult, removeFile } from "../executor/files.ts";
import { KILL_TIMEOUT_MS, type ExecutorProtocol } from "../executor/protocol.ts";
import type { ParamsOf, ResultOf } from "../rpc/protocol.ts";
import type { ExecutorLink } from "./executor-pool.ts";
import type { ExitResult } from "../structs/exit-result.ts";
import { RpcConnectionError, type RpcAnswer } from "../rpc/client.ts";
import type { TaskHandle } from "./handle.ts";

/** First pause before reconnecting to an executor whose process lives but whose connection dropped; doubles. */
const RECONNECT_BACKOFF_MS = 50;
/** Longest pause between reconnect tries: a hung executor is looked at once a second, never given up on. */
const RECONNECT_MAX_BACKOFF_MS = 1_000;

export type DriverLog = (line: string) => void;

/** True while the process a handle names still runs: same pid, same /proc start time, not a zombie. */
export function isSameProcess(pid: number, startTime: number): boolean {
  return isAlive(pid, startTime);
}

/**
 * Ends whatever is left of a task whose executor is gone: everything in its
 * cgroup, or without a cgroup its process group once the task pid's start
 * time proves it is still the task. Removes the cgroup. Returns what was done.
 */
export async function killLeftovers(handle: TaskHandle): Promise<string> {
  if (handle.cgroup) {
    const cgroup = openTaskCgroup(handle.cgroup);
    const found = cgroup.procs();
    const left = await emptyCgroup(cgroup, KILL_TIMEOUT_MS);
    if (left.length === 0) cgroup.remove();
    if (left.length > 0) return `pids ${left.join(" ")} of its cgroup survived SIGKILL`;
    return found.length > 0 ? `killed pids ${found.join(" ")} left in its cgroup` : "nothing was left in its cgroup";
  }
  if (isSameProcess(handle.task.pid, handle.task.startTime)) {
    signalEach([-handle.task.pid, handle.task.pid], "SIGKILL");
    return `killed the task's process group ${handle.task.pid}`;
  }
  return "the task's process was already gone";
}

/** Removes a task's own files in the run directory (its exit result, its isolation spec) once it is gone for good. */
export function removeTaskFiles(handle: TaskHandle): void {
  const files = executorFiles(handle.executor.exitFile.replace(/\.exit\.json$/, ""));
  for (const path of [files.exitFile, files.spec]) removeFile(path);
}

/**
 * What the driver makes of a task whose executor died: "adopted" (another
 * executor holds it now: the task was rebound), its end (it ended
 * meanwhile), or null (nothing to save: kill what is left).
 */
export type Rescue = (task: ExecutorTask) => Promise<ExitResult | "adopted" | null>;

export class ExecutorTask implements RpcAnswer<ExitResult> {
  readonly result: Promise<ExitResult>;
  exit: ExitResult | null = null;
  private resolveResult!: (result: ExitResult) => void;
  private closing = false;

  constructor(
    /** Replaced when another executor adopts the task (rebind). */
    public handle: TaskHandle,
    /** The executor's link; null when it did not answer (the task's end comes from its exit file). */
    public link: ExecutorLink | null,
    private readonly log: DriverLog,
    private readonly rescue?: Rescue,
  ) {
    // The resolve function alone is kept, settle() is a method: no closure of its own per running task (issue 35).
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
  }

  /** The task's end, once: the first result stands. */
  private settle(result: ExitResult): void {
    if (this.exit) return;
    this.exit = result;
    this.resolveResult(result);
  }

  get id(): string {
    return `${this.handle.allocId}/${this.handle.taskName}`;
  }

  /** Calls `method` about this task on its executor; throws when the executor is not connected. */
  call<M extends keyof ExecutorProtocol & string>(
    method: M,
    params: Omit<ParamsOf<ExecutorProtocol, M>, "key">,
    timeoutMs?: number,
  ): Promise<ResultOf<ExecutorProtocol, M>> {
    return this.live().call(method, this.keyed(params), timeoutMs);
  }

  /** `params` with this task's key on its executor, where the handle has one. */
  private keyed<M extends keyof ExecutorProtocol & string>(params: Omit<ParamsOf<ExecutorProtocol, M>, "key">): ParamsOf<ExecutorProtocol, M> {
    const key = this.handle.executor.key;
    return (key === undefined ? params : { ...params, key }) as ParamsOf<ExecutorProtocol, M>;
  }

  /**
   * Starts the one long `wait` call; its answer, or the executor's loss, settles `result`. The
   * answer comes to this task's own methods (answered, failed): a call that stays in flight for
   * the task's whole run keeps no promise or closure of its own (issue 35).
   */
  watch(): void {
    if (!this.link?.connected || this.exit) return;
    this.live().answerTo("wait", this.keyed<"wait">({}), this);
  }

  /** @internal the wait call's answer (watch) */
  answered(result: ExitResult): void {
    this.settle(result);
  }

  /** @internal the wait call's failure (watch): the executor's loss is followed, any other is the task's end. */
  failed(err: Error): void {
    if (this.closing) return;
    if (err instanceof RpcConnectionError) void this.connectionLost(err.message);
    else this.settle(this.failure(`wait: ${err.message}`));
  }

  /** Follows the task under the executor that adopted it. */
  rebind(handle: TaskHandle, link: ExecutorLink): void {
    this.handle = handle;
    this.link = link;
  }

  /** Settles from a stored exit result (the executor ended while no agent was there). */
  settleFrom(result: ExitResult): void {
    this.settle(result);
  }

  private async connectionLost(reason: string): Promise<void> {
    const { pid, startTime } = this.handle.executor;
    let backoff = RECONNECT_BACKOFF_MS;
    // An executor that still runs keeps the task; only its death, proven from /proc, ends the wait.
    while (!this.closing) {
      const stored = this.storedResult();
      if (stored) return this.settle(stored);
      if (!isSameProcess(pid, startTime)) break;
      try {
        await this.link!.reconnect();
        this.log(`reconnected to executor ${pid} of ${this.id} after: ${reason}`);
        return this.watch();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, RECONNECT_MAX_BACKOFF_MS);
      }
    }
    if (this.closing) return;
    // It may have written the result in its last moment.
    const late = this.storedResult();
    if (late) return this.settle(late);
    const rescued = await this.rescue?.(this).catch((err: Error) => {
      this.log(`rescue ${this.id} after its executor (pid ${pid}) died: ${err.message}`);
      return null;
    });
    if (rescued === "adopted") return this.watch();
    if (rescued) return this.settle(rescued);
    const done = await killLeftovers(this.handle);
    this.log(`executor (pid ${pid}) of ${this.id} died (${reason}); ${done}`);
    this.settle(this.failure(`executor (pid ${pid}) died; ${done}`));
  }

  /** The exit file's result; a malformed file is a failure of its own. */
  storedResult(): ExitResult | null {
    try {
      return readExitResult(this.handle.executor.exitFile);
    } catch (err) {
      return this.failure((err as Error).message);
    }
  }

  private failure(err: string): ExitResult {
    return { exitCode: -1, signal: 0, oomKilled: false, err, finishedAt: Date.now() };
  }

  /** The executor's live connection; throws when it is gone. */
  live(): ExecutorConnection {
    if (!this.link?.connected) throw new Error(`executor of ${this.id} is not connected`);
    return this.link.live();
  }

  get connected(): boolean {
    return this.link?.connected ?? false;
  }

  /** Stops following the task without treating it as a loss (destroy, agent shutdown); the link is the pool's. */
  close(): void {
    this.closing = true;
  }
}
