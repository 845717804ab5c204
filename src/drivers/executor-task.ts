/**
 * The agent's view of one task under its executor: the connection, the one
 * long `wait` call whose answer every waiter shares, and what happens when
 * the executor goes away.
 *
 *   attached ──wait answers──────────────────────────────> exited (result from the executor)
 *      │
 *      └─connection lost──> exit file there?  ──yes──────> exited (result from the file)
 *                              │ no
 *                           executor process alive? ──yes─> reconnect, attached again
 *                              │ no (pid gone or start time differs)
 *                           empty the task's cgroup ──────> exited, err "executor died"
 *
 * The stored executor pid is never signalled: it is only looked at in /proc.
 */
import { emptyCgroup, openTaskCgroup } from "../cgroups/task-cgroup.ts";
import { signalEach } from "../cgroups/signal.ts";
import { isAlive } from "../stats/process.ts";
import { connectExecutor, type ExecutorConnection } from "../executor/client.ts";
import { executorFiles, readExitResult, removeFile } from "../executor/files.ts";
import { KILL_TIMEOUT_MS } from "../executor/protocol.ts";
import type { ExitResult } from "../structs/exit-result.ts";
import { RpcConnectionError } from "../rpc/client.ts";
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

/** How long destroy waits for an executor to be gone after it answered; it leaves within a second of `destroy`. */
const EXECUTOR_EXIT_TIMEOUT_MS = 3_000;
const EXIT_POLL_MS = 5;

/** Waits until the executor the handle names has exited; false if it still runs after the timeout. */
export async function executorGone(handle: TaskHandle): Promise<boolean> {
  const deadline = Date.now() + EXECUTOR_EXIT_TIMEOUT_MS;
  while (isSameProcess(handle.executor.pid, handle.executor.startTime)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, EXIT_POLL_MS));
  }
  return true;
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

/** Removes an executor's files (named after its socket) once it is gone for good. */
export function removeExecutorFiles(socket: string): void {
  const files = executorFiles(socket.replace(/\.sock$/, ""));
  for (const path of [files.socket, files.exitFile, files.log, files.spec]) removeFile(path);
}

export class ExecutorTask {
  readonly result: Promise<ExitResult>;
  exit: ExitResult | null = null;
  private settle!: (result: ExitResult) => void;
  private closing = false;

  constructor(
    readonly handle: TaskHandle,
    private connection: ExecutorConnection | null,
    private readonly log: DriverLog,
  ) {
    this.result = new Promise((resolve) => {
      this.settle = (result) => {
        if (this.exit) return;
        this.exit = result;
        resolve(result);
      };
    });
  }

  get id(): string {
    return `${this.handle.allocId}/${this.handle.taskName}`;
  }

  /** Starts the one long `wait` call; its answer, or the executor's loss, settles `result`. */
  watch(): void {
    const connection = this.connection;
    if (!connection || this.exit) return;
    connection.call("wait", {}).then(
      (result) => this.settle(result),
      (err) => {
        if (this.closing) return;
        if (err instanceof RpcConnectionError) void this.connectionLost(err.message);
        else this.settle(this.failure(`wait: ${(err as Error).message}`));
      },
    );
  }

  /** Settles from a stored exit result (the executor ended while no agent was there). */
  settleFrom(result: ExitResult): void {
    this.settle(result);
  }

  private async connectionLost(reason: string): Promise<void> {
    this.connection = null;
    const { pid, startTime, socket } = this.handle.executor;
    let backoff = RECONNECT_BACKOFF_MS;
    // An executor that still runs keeps the task; only its death, proven from /proc, ends the wait.
    while (!this.closing) {
      const stored = this.storedResult();
      if (stored) return this.settle(stored);
      if (!isSameProcess(pid, startTime)) break;
      try {
        this.connection = (await connectExecutor(socket, pid)).connection;
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

  /** The live connection; throws when the executor is gone. */
  live(): ExecutorConnection {
    if (!this.connection || this.connection.isClosed) throw new Error(`executor of ${this.id} is not connected`);
    return this.connection;
  }

  get connected(): boolean {
    return this.connection !== null && !this.connection.isClosed;
  }

  /** Hangs up without treating it as a loss (destroy, agent shutdown). */
  close(): void {
    this.closing = true;
    this.connection?.close();
    this.connection = null;
  }
}
