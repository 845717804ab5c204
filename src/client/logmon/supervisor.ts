/**
 * Keeps the host's one logmon running and a connection to it, from the agent.
 *
 *   start() ─► connect to a running logmon ──────────────────────────► connected
 *                 │ none, and saved registrations exist (tasks outlived both)  ▲
 *                 ▼                                                            │
 *   call() ─► connect, or spawn `drover logmon` detached ─► wait for its socket ─┘
 *                 ▲                                                            │
 *                 │ backoff RESTART_BACKOFF_MIN_MS .. _MAX_MS                   │ connection closed, or a
 *                 └──────────────────── restart at once ◄──────────────────────┘ probe unanswered (SIGKILL it)
 *
 *   on every (re)connection the onConnect hooks run (the client re-registers its tasks)
 *   stop() ─► close the connection; the logmon keeps running for the next agent
 *   terminate() ─► SIGTERM it (it flushes every task) and wait until it is gone
 *
 * The logmon runs in its own session with its own log file, so it outlives
 * the agent; a new agent finds it by its socket.
 */
import { chmodSync, closeSync, constants, mkdirSync, openSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { LOGMON_PROTOCOL, type LogmonProtocol } from "../../logmon/protocol.ts";
import { Registrations, REGISTRATIONS_FILE } from "../../logmon/registrations.ts";
import type { ParamsOf, ResultOf } from "../../rpc/protocol.ts";
import { withTimeout } from "../../lib/timeout.ts";
import { RpcClient, RpcConnectionError } from "../../rpc/client.ts";
import { spawnSelf, type ChildProcess } from "../../runtime/spawn.ts";
import { MAX_SOCKET_PATH_BYTES } from "../../runtime/unix.ts";

/** How long a spawned logmon may take to listen (a cold `bun src/main.ts` start included). */
export const START_TIMEOUT_MS = 15_000;
/** Interval between connection attempts while a spawned logmon starts. */
const CONNECT_RETRY_MS = 25;
/** First and longest wait between failed (re)starts: quick after a crash, gentle when it keeps failing. */
export const RESTART_BACKOFF_MIN_MS = 100;
export const RESTART_BACKOFF_MAX_MS = 5_000;
/** How often a quiet connection is probed, and how long an answer may take before the logmon counts as hung. */
export const PROBE_INTERVAL_MS = 10_000;
export const PROBE_TIMEOUT_MS = 5_000;
/** How long terminate() waits for the kernel to end a SIGKILLed logmon. */
const KILL_WAIT_MS = 2_000;
/** Default time a call may wait for the logmon, its (re)start included. */
export const CALL_TIMEOUT_MS = 30_000;
/** The logmon's own log is set aside as .1 at a (re)start once it passes this size. */
const LOG_FILE_ROTATE_BYTES = 4 << 20;

export type LogmonRpc = RpcClient<LogmonProtocol>;

export type LogmonEvent =
  | { kind: "spawned"; pid: number }
  | { kind: "connected"; pid: number; version: string; tasks: number }
  | { kind: "lost"; pid: number | undefined }
  | { kind: "unresponsive"; pid: number }
  | { kind: "start-failed"; error: string; retryInMs: number };

export interface LogmonSupervisorOptions {
  /** The logmon's own dir (<data_dir>/logmon): saved registrations, lock, its log. */
  stateDir: string;
  /** Its socket; default <stateDir>/logmon.sock. A unix socket path must stay under 108 bytes. */
  socketPath?: string;
  /** Environment for the logmon process (cleaned of runtime variables); default this process's. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The command that runs drover (a binary, or a runtime and src/main.ts) for the logmon; this program when absent (a bench runs the compiled one, or Deno's). */
  drover?: readonly string[];
  onEvent?: (event: LogmonEvent) => void;
  /** Overrides PROBE_INTERVAL_MS / PROBE_TIMEOUT_MS (tests). */
  probe?: { intervalMs: number; timeoutMs: number };
}

export class LogmonSupervisor {
  readonly stateDir: string;
  readonly socketPath: string;
  readonly logFile: string;
  private rpc: LogmonRpc | null = null;
  private connecting: Promise<LogmonRpc> | null = null;
  private pid: number | undefined;
  private probe: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  /** Why the last (re)start failed, for the error of a call that gave up waiting. */
  private lastStartError = "";
  private readonly connectHooks: ((rpc: LogmonRpc) => Promise<void>)[] = [];

  constructor(private readonly options: LogmonSupervisorOptions) {
    this.stateDir = options.stateDir;
    this.socketPath = options.socketPath ?? join(options.stateDir, "logmon.sock");
    this.logFile = join(options.stateDir, "logmon.log");
    if (Buffer.byteLength(this.socketPath) > MAX_SOCKET_PATH_BYTES) {
      throw new Error(`logmon socket path ${this.socketPath} is longer than ${MAX_SOCKET_PATH_BYTES} bytes; choose a shorter data_dir`);
    }
  }

  /** The logmon's pid once connected. */
  get logmonPid(): number | undefined {
    return this.pid;
  }

  /** Runs `hook` on every (re)connection, before calls proceed. */
  onConnect(hook: (rpc: LogmonRpc) => Promise<void>): void {
    this.connectHooks.push(hook);
  }

  /**
   * Attaches at agent start: connects to a running logmon, or starts one when
   * saved registrations say tasks still need it; otherwise the first call does.
   */
  async start(): Promise<void> {
    this.stopped = false;
    const attached = await this.tryConnect();
    if (attached) {
      try {
        await this.adopt(attached);
        return;
      } catch {
        // It died as we attached: start another, below.
      }
    }
    if (attached || this.hasSavedTasks()) await this.connection();
  }

  /** Calls `method`, (re)starting the logmon as needed; a call cut off by its death is made once more. */
  async call<M extends keyof LogmonProtocol & string>(
    method: M,
    params: ParamsOf<LogmonProtocol, M>,
    timeoutMs = CALL_TIMEOUT_MS,
  ): Promise<ResultOf<LogmonProtocol, M>> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const rpc = await withDeadline(this.connection(), deadline, () => `logmon ${method}: no logmon answered in time (${this.lastStartError || "still starting"})`);
      try {
        return await rpc.call(method, params, Math.max(1, deadline - Date.now()));
      } catch (err) {
        if (!(err instanceof RpcConnectionError) || attempt > 0 || Date.now() >= deadline) throw err;
      }
    }
  }

  /** Closes the connection; the logmon keeps running. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.probe);
    this.probe = undefined;
    this.rpc?.close();
    this.rpc = null;
  }

  /**
   * Stops the logmon itself (it flushes every task first) and returns once it
   * has exited. A (re)start in flight is seen through first, so a logmon
   * spawned a moment ago is not left behind.
   */
  async terminate(timeoutMs = START_TIMEOUT_MS): Promise<void> {
    this.stopped = true;
    await this.connecting?.catch(() => {});
    const pid = this.pid;
    this.stop();
    if (pid === undefined) return;
    signal(pid, "SIGTERM");
    if (await exitedBy(pid, Date.now() + timeoutMs)) return;
    signal(pid, "SIGKILL");
    await exitedBy(pid, Date.now() + KILL_WAIT_MS);
  }

  /** The live connection, connecting or (re)starting the logmon first when there is none. */
  private connection(): Promise<LogmonRpc> {
    if (this.rpc && !this.rpc.isClosed) return Promise.resolve(this.rpc);
    this.connecting ??= this.establish().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async establish(): Promise<LogmonRpc> {
    let backoff = RESTART_BACKOFF_MIN_MS;
    for (;;) {
      if (this.stopped) throw new RpcConnectionError("logmon supervisor stopped");
      try {
        const attached = await this.tryConnect();
        if (attached) return await this.adopt(attached);
        const { rpc, child } = await this.spawnAndConnect();
        try {
          return await this.adopt(rpc);
        } finally {
          // Another supervisor's logmon won the race; ours waits for the lock and would take over,
          // unsupervised, the moment the winner stops.
          if (this.pid !== child.pid) child.kill("SIGTERM");
        }
      } catch (err) {
        this.lastStartError = err instanceof Error ? err.message : String(err);
        this.emit({ kind: "start-failed", error: this.lastStartError, retryInMs: backoff });
        await sleep(backoff);
        backoff = Math.min(backoff * 2, RESTART_BACKOFF_MAX_MS);
      }
    }
  }

  /** Probes a fresh connection, runs the connect hooks, and watches for its end. */
  private async adopt(rpc: LogmonRpc): Promise<LogmonRpc> {
    let version: ResultOf<LogmonProtocol, "version">;
    try {
      version = await rpc.call("version", {}, PROBE_TIMEOUT_MS);
      this.pid = version.pid;
      if (this.stopped) throw new RpcConnectionError("logmon supervisor stopped");
      for (const hook of this.connectHooks) await hook(rpc);
    } catch (err) {
      rpc.close();
      throw err;
    }
    this.rpc = rpc;
    if (!this.probe) {
      this.probe = setInterval(() => void this.probeOnce(), this.options.probe?.intervalMs ?? PROBE_INTERVAL_MS);
      this.probe.unref?.();
    }
    this.emit({ kind: "connected", pid: version.pid, version: version.version, tasks: version.tasks });
    void rpc.closedPromise().then(() => this.lost(rpc));
    return rpc;
  }

  private lost(rpc: LogmonRpc): void {
    if (this.stopped || this.rpc !== rpc) return;
    this.rpc = null;
    this.emit({ kind: "lost", pid: this.pid });
    // Its pid may be reused by now; only a logmon reached again is ever signalled.
    this.pid = undefined;
    // Restart at once, not at the next call: the tasks' pipes fill while no logmon reads them.
    this.connection().catch(() => {});
  }

  private async tryConnect(): Promise<LogmonRpc | null> {
    try {
      return await RpcClient.connect(this.socketPath, LOGMON_PROTOCOL);
    } catch (err) {
      if (err instanceof RpcConnectionError) return null;
      throw err;
    }
  }

  /** Spawns a logmon and connects to whichever logmon then listens: normally this one, or a rival started at the same time. */
  private async spawnAndConnect(): Promise<{ rpc: LogmonRpc; child: ChildProcess }> {
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    chmodSync(this.stateDir, 0o700);
    this.setAsideLargeLog();
    const logFd = openSync(this.logFile, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    let child;
    try {
      child = spawnSelf("logmon", ["--state-dir", this.stateDir, "--socket", this.socketPath], {
        ...(this.options.drover ? { drover: this.options.drover } : {}),
        env: this.options.env ?? process.env,
        detached: true,
        stdout: logFd,
        stderr: logFd,
      });
    } finally {
      closeSync(logFd);
    }
    child.unref();
    this.emit({ kind: "spawned", pid: child.pid });
    let exited = false;
    void child.exited.then(() => {
      exited = true;
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const rpc = await this.tryConnect();
      if (rpc) return { rpc, child };
      if (exited) throw new Error(`logmon (pid ${child.pid}) exited while starting; see ${this.logFile}`);
      await sleep(CONNECT_RETRY_MS);
    }
    child.kill("SIGKILL");
    throw new Error(`logmon (pid ${child.pid}) did not listen on ${this.socketPath} within ${START_TIMEOUT_MS} ms`);
  }

  /** A logmon that stops answering is killed (nothing is lost: its bytes wait in the pipes) and restarted. */
  private async probeOnce(): Promise<void> {
    const rpc = this.rpc;
    if (!rpc || rpc.isClosed || this.pid === undefined) return;
    try {
      await rpc.call("version", {}, this.options.probe?.timeoutMs ?? PROBE_TIMEOUT_MS);
    } catch {
      if (rpc.isClosed || this.rpc !== rpc) return;
      this.emit({ kind: "unresponsive", pid: this.pid });
      signal(this.pid, "SIGKILL");
      rpc.close();
    }
  }

  private hasSavedTasks(): boolean {
    return new Registrations(join(this.stateDir, REGISTRATIONS_FILE)).mayHaveTasks();
  }

  private setAsideLargeLog(): void {
    try {
      if (statSync(this.logFile).size > LOG_FILE_ROTATE_BYTES) renameSync(this.logFile, `${this.logFile}.1`);
    } catch {
      // No log yet.
    }
  }

  private emit(event: LogmonEvent): void {
    this.options.onEvent?.(event);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether `pid` is gone by `deadline`. */
async function exitedBy(pid: number, deadline: number): Promise<boolean> {
  while (alive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(CONNECT_RETRY_MS);
  }
  return true;
}

function withDeadline<T>(promise: Promise<T>, deadline: number, message: () => string): Promise<T> {
  return withTimeout(promise, Math.max(0, deadline - Date.now()), () => new RpcConnectionError(message()));
}
