/**
 * The executors one driver's tasks run under. Each executor supervises up to
 * `tasksPerExecutor` tasks, so a host of many tasks pays for few supervisor
 * processes; each task still has its own exit file and its own cgroup, and a
 * crashed executor costs only the tasks it held.
 *
 *   acquire() ──> the fullest executor with a free slot (the slot is taken at once)
 *                   │ none: start one; concurrent acquirers wait for that start
 *   warm() ──> a task is being prepared: start an executor now if none has room, so
 *              its start overlaps the task's hooks; acquire() then finds it (or waits
 *              for it). One no task took within SPARE_EXECUTOR_WAIT_MS is retired.
 *   release(link) ──> the slot is free; an executor left with no task is
 *                     retired: destroy() ──> it removes its files and exits
 *   attach(handle's executor) ──> one connection and one `version` per executor,
 *                     however many of its tasks are recovered; its tasks fill its slots
 *   discover() ──> once per agent, before this agent starts any executor: every
 *                     executor in the run directory and what it runs (for adopting a
 *                     task whose handle was never saved); one an earlier agent left
 *                     holding no task (its spare) is retired
 *
 * The agent owns the slot count: an executor never refuses a launch for room.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { connectExecutor, startExecutor, startExecutorUnder, type ExecutorConnection, type StartedExecutor } from "../executor/client.ts";
import { ReaperUnavailableError, type HostReaperLink } from "../executor/reaper-client.ts";
import { executorFiles, removeFile } from "../executor/files.ts";
import { REAPER_SOCKET } from "../executor/reaper-protocol.ts";
import { EXECUTOR_PROTOCOL, type SupervisedTask, type VersionResult } from "../executor/protocol.ts";
import { isAlive, processStartTime } from "../stats/process.ts";
import { RpcConnectionError } from "../rpc/client.ts";

/** Quick calls (version, destroy) that should never take long. */
export const QUICK_CALL_TIMEOUT_MS = 10_000;
/** How long a retired executor may take to exit after it answered `destroy` (it leaves within a second). */
const EXECUTOR_EXIT_TIMEOUT_MS = 3_000;
const EXIT_POLL_MS = 5;
/**
 * How long an executor warm() started waits for its task before it is
 * retired: far longer than the hooks of a task that starts (milliseconds),
 * short enough that a task whose hooks failed leaves no executor for long.
 */
export const SPARE_EXECUTOR_WAIT_MS = 5_000;

export type PoolLog = (line: string) => void;

/** The executor's own files: its socket and its log (a task's files are its own business). */
export function removeExecutorOwnFiles(socket: string): void {
  const files = executorFiles(socket.replace(/\.sock$/, ""));
  for (const path of [files.socket, files.log, files.exitFile, files.spec]) removeFile(path);
}

/** The tasks an executor reports: every one for protocol 2; protocol 1's one task under its own name. */
export function supervisedTasks(socket: string, version: VersionResult): SupervisedTask[] {
  if (version.tasks) return version.tasks;
  if (version.allocId === null || version.taskName === null) return [];
  const key = socket.slice(socket.lastIndexOf("/") + 1).replace(/\.sock$/, "");
  return [{ key, allocId: version.allocId, taskName: version.taskName, state: version.state, task: version.task }];
}

/** When this agent process started (clock ticks since boot, as processStartTime counts). */
const THIS_AGENT_STARTED = processStartTime(process.pid) ?? 0;

/**
 * An executor with no task, started before this agent: a spare warm() started
 * for an agent that died before its task came (or whose tasks all ended and
 * were destroyed). Nothing will take it, and this agent's connection would keep
 * it from leaving by itself. One this agent started is another pool's spare
 * waiting for its task, and is left alone.
 */
function isSpareOfAnEarlierAgent(socket: string, entry: { link: ExecutorLink; version: VersionResult }): boolean {
  return supervisedTasks(socket, entry.version).length === 0 && entry.link.startTime > 0 && entry.link.startTime < THIS_AGENT_STARTED;
}

/** One executor process as the agent sees it: its identity, the shared connection, its slots. */
export class ExecutorLink {
  /** Tasks placed in it: launching, running, or ended and not yet destroyed. */
  slots = 0;
  /** Set once it may take no more tasks (it is being destroyed, or it is gone). */
  retired = false;
  /** Cleared once it answered that it has no `statsBatch` (an executor left by an older drover). */
  batchesStats = true;
  private reconnecting: Promise<ExecutorConnection> | null = null;

  constructor(
    readonly pid: number,
    /** /proc start time: with the pid, names this process for good. */
    readonly startTime: number,
    readonly socket: string,
    readonly log: string,
    readonly protocol: number,
    /** The drover version it runs. */
    readonly drover: string,
    private connection: ExecutorConnection | null,
  ) {}

  get connected(): boolean {
    return this.connection !== null && !this.connection.isClosed;
  }

  /** The live connection; throws when the executor is not connected. */
  live(): ExecutorConnection {
    if (!this.connection || this.connection.isClosed) throw new Error(`executor ${this.pid} is not connected`);
    return this.connection;
  }

  /** True while its process still runs (same pid, same start time). */
  get alive(): boolean {
    return isAlive(this.pid, this.startTime);
  }

  /** Connects again after a loss; every task of the executor shares the one attempt. */
  reconnect(): Promise<ExecutorConnection> {
    if (this.connected) return Promise.resolve(this.connection!);
    this.reconnecting ??= connectExecutor(this.socket, this.pid)
      .then(({ connection }) => {
        this.connection = connection;
        return connection;
      })
      .finally(() => {
        this.reconnecting = null;
      });
    return this.reconnecting;
  }

  close(): void {
    this.connection?.close();
    this.connection = null;
  }
}

export interface ExecutorPoolOptions {
  runDir: string;
  /** Most tasks one executor supervises; 1 gives every task an executor of its own. */
  tasksPerExecutor: number;
  /** The command that runs drover for executors; this program when absent. */
  drover?: readonly string[];
  log: PoolLog;
  /** The host reaper that starts executors as its children; none: the agent starts them itself. */
  reaper?: HostReaperLink;
}

export class ExecutorPool {
  private readonly links = new Map<string, ExecutorLink>();
  /** Executors an earlier agent left, by socket: connected once, asked `version` once. */
  private readonly attached = new Map<string, Promise<{ link: ExecutorLink; version: VersionResult }>>();
  private starting: Promise<ExecutorLink> | null = null;
  private discovered: Promise<{ link: ExecutorLink; version: VersionResult }[]> | null = null;

  constructor(private readonly options: ExecutorPoolOptions) {}

  /** A slot in an executor that can take a task now, starting an executor when none has room. */
  async acquire(): Promise<ExecutorLink> {
    // Executors an earlier agent left are known first, so none is started beside one with room.
    await this.discover();
    for (;;) {
      const link = this.withRoom();
      if (link) {
        link.slots++;
        return link;
      }
      this.starting ??= this.start().finally(() => {
        this.starting = null;
      });
      await this.starting;
    }
  }

  /**
   * A task is about to want a slot: starts an executor now unless one has
   * room or is starting, so that its start runs beside the task's hooks.
   * Takes no slot; a failure is only logged (acquire() tries again).
   */
  async warm(): Promise<void> {
    try {
      await this.discover();
      if (this.withRoom() || this.starting) return;
      this.starting = this.start().finally(() => {
        this.starting = null;
      });
      const link = await this.starting;
      const timer = setTimeout(() => {
        if (link.slots === 0 && !link.retired) void this.retire(link);
      }, SPARE_EXECUTOR_WAIT_MS);
      timer.unref?.();
    } catch (err) {
      this.options.log(`start an executor ahead of a task: ${(err as Error).message}`);
    }
  }

  /** The fullest executor that still has room: tasks pack into few executors. */
  private withRoom(): ExecutorLink | undefined {
    let best: ExecutorLink | undefined;
    for (const link of this.links.values()) {
      if (link.retired || link.protocol < EXECUTOR_PROTOCOL || !link.connected || link.slots >= this.options.tasksPerExecutor) continue;
      if (!best || link.slots > best.slots) best = link;
    }
    return best;
  }

  /**
   * Starts an executor under the host reaper, so that its tasks outlive it;
   * without a reaper, as the agent's own child, as before the reaper existed.
   */
  private async spawn(): Promise<StartedExecutor> {
    const options = { runDir: this.options.runDir, drover: this.options.drover };
    if (this.options.reaper) {
      try {
        return await startExecutorUnder(this.options.reaper, options);
      } catch (err) {
        if (!(err instanceof ReaperUnavailableError)) throw err;
        this.options.log(`${err.message}; this executor is started by the agent, and its tasks will not outlive it`);
      }
    }
    return startExecutor(options);
  }

  private async start(): Promise<ExecutorLink> {
    const started = await this.spawn();
    let drover: string;
    try {
      drover = (await started.connection.call("version", {}, QUICK_CALL_TIMEOUT_MS)).version;
    } catch (err) {
      await started.connection.call("destroy", {}, QUICK_CALL_TIMEOUT_MS).catch(() => undefined);
      started.connection.close();
      removeExecutorOwnFiles(started.files.socket);
      throw err;
    }
    const link = new ExecutorLink(started.pid, started.startTime, started.files.socket, started.files.log, EXECUTOR_PROTOCOL, drover, started.connection);
    this.links.set(link.socket, link);
    return link;
  }

  /**
   * The executor on `socket`, connected and checked (its protocol, and its
   * pid when a handle names one); one connection and one `version` however
   * many of its tasks ask at once. Its tasks, as it reports them, fill its
   * slots. Throws RpcConnectionError or ExecutorMismatchError when it does
   * not answer as that executor.
   */
  attach(socket: string, expected?: { pid: number; startTime: number }): Promise<{ link: ExecutorLink; version: VersionResult }> {
    const known = this.links.get(socket);
    if (known && !known.retired && !this.attached.has(socket) && (!expected || known.pid === expected.pid)) {
      // Started by this agent: asked afresh.
      return known
        .reconnect()
        .then((connection) => connection.call("version", {}, QUICK_CALL_TIMEOUT_MS))
        .then((version) => ({ link: known, version }));
    }
    let attaching = this.attached.get(socket);
    if (!attaching) {
      attaching = connectExecutor(socket, expected?.pid).then(({ connection, version }) => {
        const startTime = expected?.startTime ?? processStartTime(version.pid) ?? 0;
        const log = executorFiles(socket.replace(/\.sock$/, "")).log;
        const link = new ExecutorLink(version.pid, startTime, socket, log, version.protocol, version.version, connection);
        link.slots = supervisedTasks(socket, version).length;
        this.links.set(socket, link);
        return { link, version };
      });
      // What it reported stays the answer for its other tasks (a task that ended since says so through its wait);
      // a failure does not: the next asker tries again.
      attaching.catch(() => this.attached.delete(socket));
      this.attached.set(socket, attaching);
    }
    return attaching;
  }

  /**
   * Every executor in the run directory that answers, connected, with what
   * it runs: looked at once per agent, before it starts an executor of its
   * own. The files of a socket nobody answers on are removed.
   */
  discover(): Promise<{ link: ExecutorLink; version: VersionResult }[]> {
    this.discovered ??= this.scan();
    return this.discovered;
  }

  private async scan(): Promise<{ link: ExecutorLink; version: VersionResult }[]> {
    let sockets: string[];
    try {
      sockets = readdirSync(this.options.runDir)
        .filter((name) => name.endsWith(".sock") && name !== REAPER_SOCKET)
        .map((name) => join(this.options.runDir, name));
    } catch {
      return [];
    }
    const found = await Promise.all(
      sockets.map((socket) =>
        this.attach(socket)
          .then(async (entry) => {
            if (!isSpareOfAnEarlierAgent(socket, entry)) return entry;
            this.options.log(`executor ${entry.link.pid} holds no task and was started before this agent; retired`);
            await this.retire(entry.link);
            return null;
          })
          .catch((err: Error) => {
            if (err instanceof RpcConnectionError && !this.links.has(socket)) {
              this.options.log(`no executor answers on ${socket} (${err.message}); its files are removed`);
              removeExecutorOwnFiles(socket);
            }
            return null;
          }),
      ),
    );
    return found.filter((entry) => entry !== null);
  }

  /** The task in this slot is gone for good: the slot is free, and an empty executor is retired. */
  async release(link: ExecutorLink): Promise<void> {
    link.slots = Math.max(0, link.slots - 1);
    if (link.slots > 0 || link.retired) return;
    await this.retire(link);
  }

  /** Destroys an executor with no task left: it removes its own files and exits. */
  private async retire(link: ExecutorLink): Promise<void> {
    link.retired = true;
    if (this.links.get(link.socket) === link) {
      this.links.delete(link.socket);
      // Its answer from before no longer holds: a later attach finds the socket gone.
      this.attached.delete(link.socket);
    }
    if (link.connected) await link.live().call("destroy", {}, QUICK_CALL_TIMEOUT_MS).catch((err: Error) => this.options.log(`retire executor ${link.pid}: ${err.message}`));
    link.close();
    const deadline = Date.now() + EXECUTOR_EXIT_TIMEOUT_MS;
    while (link.alive) {
      if (Date.now() >= deadline) {
        this.options.log(`executor ${link.pid} still runs after destroy`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, EXIT_POLL_MS));
    }
    removeExecutorOwnFiles(link.socket);
  }

  /** Hangs up on every executor (agent shutdown); they and their tasks keep running. */
  closeAll(): void {
    for (const link of this.links.values()) link.close();
    this.links.clear();
  }
}
