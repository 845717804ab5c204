/**
 * The `drover executor` role: supervises tasks for their whole lives,
 * whatever happens to the agent. The agent starts one per few tasks (it
 * decides how many share one), so it loads only what it needs (no HTTP
 * framework, ORM or logger library).
 *
 *   drover executor <base>      its socket and log at <base>.sock, .log; each
 *                               task's files at <run dir>/<key>.exit.json, .spec.json
 *
 *   agent ── spawnSelf, own session, stdout/stderr = <base>.log ──> executor
 *     executor: child subreaper; serves <base>.sock, then closes fd 3 (ready)
 *   agent ── launch(key) ──> executor ── spawn (cgroup, FIFOs) ──> task (one Supervisor per key)
 *   agent ── wait / stats / signal / exec / shutdown (key) ──> that task's Supervisor
 *   agent ── execStart / execWait / execKill (key) ──> that task's interactive sessions,
 *     whose stdio the agent takes over (exec-session.ts)
 *   agent ── destroy(key) ──> that task's leftovers killed, its files removed, forgotten
 *   agent ── destroy() ──> every task's, then the executor removes its own files and exits
 *
 *   agent gone: the executor and its tasks keep running; a new agent
 *   reattaches through `version`, which lists every task. With no agent at
 *   all, linger.ts says when the executor may leave. SIGTERM/SIGINT to the
 *   executor stop every task first (nothing is orphaned), keep the exit
 *   files, and exit.
 */
import { agentSideOnly } from "../rpc/peer-check.ts";
import { serveRpc } from "../rpc/server.ts";
import type { UnixServer } from "../runtime/unix.ts";
import { executorFiles, ExitResultWriter, removeFile, type ExecutorFiles } from "./files.ts";
import { VERSION } from "../lib/version.ts";
import type { TaskResourceUsage } from "../stats/task.ts";
import { O_WRONLY, readTextFile, sysClose, sysOpen, sysStat, sysWrite } from "../runtime/libc.ts";
import { takeReadyFd } from "../runtime/self.ts";
import { slowJitTierUp } from "../runtime/jit.ts";
import { SettledCollector } from "../runtime/gc.ts";
import { LINGER_CHECK_MS, mayExit } from "./linger.ts";
import { EXECUTOR_PROTOCOL, ExecutorProtocol, type LaunchRequest, type LaunchResult, type SupervisedTask, type VersionResult } from "./protocol.ts";
import { Reaper } from "./reaper.ts";
import { Supervisor, type Log } from "./supervisor.ts";

/** After `destroy` answered, the agent hangs up; if it does not, leave anyway after this. */
const DESTROY_EXIT_GRACE_MS = 1_000;
/** Grace the task gets when the executor itself is told to stop (SIGTERM/SIGINT). */
const TERMINATED_GRACE_MS = 5_000;

/**
 * Tier-up threshold multiplier for the executor's code: it runs a few calls a
 * second at most, so interpreting them costs nothing that matters, while
 * compiled tiers cost memory in every executor (10 gave all of the saving
 * that 1000 did).
 */
const EXECUTOR_JIT_POLICY = 10;

/**
 * How long after its last launch, destroy or reattach the executor collects
 * its garbage in full (SettledCollector): the agent launches a node's tasks
 * in slices of 16 a turn, so a burst is over well within this.
 */
const SETTLED_COLLECT_MS = 2_000;

const USAGE = "usage: drover executor <base path>";

export async function main(argv: readonly string[]): Promise<number> {
  if (argv.length !== 1 || !argv[0]!.startsWith("/")) {
    sysWrite(2, `${USAGE}\n`);
    return 2;
  }
  const readyFd = readyPipeFd();
  slowJitTierUp(EXECUTOR_JIT_POLICY);
  const files = executorFiles(argv[0]!);
  const log: Log = (line) => sysWrite(2, `${new Date().toISOString()} executor[${process.pid}] ${line}\n`);
  leaveOomProtection(log);
  const reaper = new Reaper();
  reaper.start();
  new Executor(files, reaper, log, readyFd).serve();
  // The server and timers keep the process alive; it ends through process.exit.
  return new Promise<number>(() => {});
}

/**
 * The agent may run shielded from the OOM killer (the systemd unit's
 * OOMScoreAdjust=-1000), and children inherit that: a task over its memory
 * limit would then be unkillable, and loop in the cgroup's OOM handling
 * instead of being killed and reported. The executor takes the kernel's
 * default back before it starts any task, so every task and its forks
 * inherit that instead. Raising the score needs no privilege.
 */
function leaveOomProtection(log: Log): void {
  try {
    if (Number(readTextFile("/proc/self/oom_score_adj").trim()) >= 0) return;
    const fd = sysOpen("/proc/self/oom_score_adj", O_WRONLY);
    try {
      sysWrite(fd, "0");
    } finally {
      sysClose(fd);
    }
  } catch (err) {
    log(`tasks keep the agent's OOM score: ${(err as Error).message}`);
  }
}

/**
 * The agent's ready pipe, or null. Only a pipe is closed: the variable alone
 * (a hand-made start) must not close whatever else fd 3 is, such as the
 * runtime's own event loop descriptor.
 */
function readyPipeFd(): number | null {
  const fd = takeReadyFd();
  try {
    return fd !== null && sysStat(fd).kind === "fifo" ? fd : null;
  } catch {
    return null;
  }
}

/** The files of the task known as `key`: beside the executor's own, in the run directory. */
function taskFiles(files: ExecutorFiles, key: string): ExecutorFiles {
  return executorFiles(`${files.base.slice(0, files.base.lastIndexOf("/") + 1)}${key}`);
}

class Executor {
  private server: UnixServer | null = null;
  private connections = 0;
  private unattendedSince = Date.now();
  private destroyed = false;
  /** Every task by key; a key whose launch failed is dropped again. */
  private readonly tasks = new Map<string, Supervisor>();
  /** The key of a call that names none: the executor's own name (protocol 1's one task). */
  private readonly ownKey: string;
  /** Launches, destroys and reattaches make garbage that an idle executor would keep (measured in docs/performance.md). */
  private readonly collector = new SettledCollector(SETTLED_COLLECT_MS);
  private readonly exitWriter = new ExitResultWriter();

  constructor(
    private readonly files: ExecutorFiles,
    private readonly reaper: Reaper,
    private readonly log: Log,
    /** Closed once the socket listens: the agent waits for that instead of polling. */
    private readonly readyFd: number | null,
  ) {
    this.ownKey = files.base.slice(files.base.lastIndexOf("/") + 1);
  }

  serve(): void {
    this.server = serveRpc(
      this.files.socket,
      ExecutorProtocol,
      {
        version: () => this.version(),
        launch: (request) => this.launch(request),
        adopt: ({ key, task, ...request }) => this.adopt(key, request, task),
        wait: ({ key }) => this.task(key).wait(),
        signal: ({ key, signal }) => (this.task(key).signal(signal), null),
        shutdown: ({ key, signal, graceMs }) => this.task(key).shutdown(signal, graceMs),
        stats: ({ key }) => this.task(key).stats(),
        statsBatch: ({ keys }) => this.statsBatch(keys),
        exec: ({ key, argv, timeoutMs }) => this.task(key).exec(argv, timeoutMs),
        execStart: ({ key, argv, tty }, peer) => this.task(key).execStart(argv, tty, peer),
        execWait: ({ key, session }) => this.task(key).execWait(session),
        execKill: async ({ key, session }) => (await this.task(key).execKill(session), null),
        destroy: ({ key }) => (key === undefined ? this.destroyAll() : this.destroy(key)),
      },
      {
        open: () => this.connections++,
        close: () => this.hangUp(),
      },
      agentSideOnly((why) => this.log(`refused a connection: ${why}`)),
    );
    setInterval(() => this.lingerCheck(), LINGER_CHECK_MS);
    // A hangup means nothing to a process in its own session.
    process.on("SIGHUP", () => {});
    process.on("SIGTERM", () => void this.terminate("SIGTERM"));
    process.on("SIGINT", () => void this.terminate("SIGINT"));
    this.log(`serving ${this.files.socket}`);
    // Listening and with its handlers in place: the agent may connect now.
    if (this.readyFd !== null) sysClose(this.readyFd);
  }

  private task(key: string | undefined): Supervisor {
    const task = this.tasks.get(key ?? this.ownKey);
    if (!task) throw new Error(key === undefined ? "no task launched" : `no task "${key}" in this executor`);
    return task;
  }

  /** Each named task's usage; one that is gone or has not launched is left out. */
  private statsBatch(keys: readonly string[]): Record<string, TaskResourceUsage> {
    const out: Record<string, TaskResourceUsage> = {};
    for (const key of keys) {
      const task = this.tasks.get(key);
      if (task?.state !== "running") continue;
      try {
        out[key] = task.stats();
      } catch {
        // It ended between the look and the read: no sample this time.
      }
    }
    return out;
  }

  /** idle: no task; running: any runs; exited: all have exited. */
  private get state(): "idle" | "running" | "exited" {
    const states = [...this.tasks.values()].map((task) => task.state).filter((state) => state !== "idle");
    if (states.length === 0) return "idle";
    return states.includes("running") ? "running" : "exited";
  }

  private version(): VersionResult {
    this.collector.touch();
    const tasks: SupervisedTask[] = [...this.tasks].map(([key, task]) => task.describe(key));
    const only = tasks.length === 1 ? tasks[0]! : null;
    return {
      protocol: EXECUTOR_PROTOCOL,
      version: VERSION,
      pid: process.pid,
      state: this.state,
      allocId: only?.allocId || null,
      taskName: only?.taskName || null,
      task: only?.task ?? null,
      tasks,
    };
  }

  private async launch(params: LaunchRequest & { key?: string }): Promise<LaunchResult> {
    const { key = this.ownKey, ...request } = params;
    this.collector.touch();
    if (this.destroyed) throw new Error("this executor is being destroyed");
    const existing = this.tasks.get(key);
    // The Supervisor refuses a second launch itself, naming the task it runs.
    if (existing) return existing.launch(request);
    const task = new Supervisor(taskFiles(this.files, key), this.reaper, this.exitWriter, this.log);
    this.tasks.set(key, task);
    try {
      return await task.launch(request);
    } catch (err) {
      // A failed launch leaves nothing to supervise: the key is free again.
      if (task.state === "idle" && this.tasks.get(key) === task) this.tasks.delete(key);
      throw err;
    }
  }

  private async adopt(key: string, request: LaunchRequest, task: LaunchResult): Promise<LaunchResult> {
    this.collector.touch();
    if (this.destroyed) throw new Error("this executor is being destroyed");
    if (this.tasks.has(key)) throw new Error(`this executor already has a task "${key}"`);
    const supervisor = new Supervisor(taskFiles(this.files, key), this.reaper, this.exitWriter, this.log);
    this.tasks.set(key, supervisor);
    try {
      return await supervisor.adopt(request, task, this.files.base.slice(0, this.files.base.lastIndexOf("/")));
    } catch (err) {
      if (this.tasks.get(key) === supervisor) this.tasks.delete(key);
      throw err;
    }
  }

  private hangUp(): void {
    this.connections--;
    if (this.connections > 0) return;
    this.unattendedSince = Date.now();
    if (this.destroyed) this.leave(true);
  }

  /** One task: kill what is left, remove its files, forget it. */
  private async destroy(key: string): Promise<null> {
    const task = this.tasks.get(key);
    if (!task) return null;
    this.collector.touch();
    await task.destroy();
    this.tasks.delete(key);
    const files = taskFiles(this.files, key);
    removeFile(files.exitFile);
    removeFile(files.spec);
    return null;
  }

  /** Every task, then the executor itself. */
  private async destroyAll(): Promise<null> {
    this.destroyed = true;
    await Promise.all([...this.tasks.keys()].map((key) => this.destroy(key)));
    setTimeout(() => this.leave(true), DESTROY_EXIT_GRACE_MS);
    return null;
  }

  private lingerCheck(): void {
    const facts = {
      state: this.state,
      connections: this.connections,
      unattendedMs: Date.now() - this.unattendedSince,
      unreadLogBytes: [...this.tasks.values()].reduce((sum, task) => sum + task.unreadLogBytes(), 0),
    };
    if (!mayExit(facts)) return;
    this.log(`no agent for ${Math.round(facts.unattendedMs / 1000)} s with ${this.tasks.size} task(s) ${facts.state}; leaving`);
    void Promise.all([...this.tasks.values()].map((task) => task.destroy())).then(() => this.leave(facts.state === "idle"));
  }

  private async terminate(signal: string): Promise<void> {
    this.log(`received ${signal}; stopping every task`);
    const tasks = [...this.tasks.values()];
    await Promise.all(
      tasks.map(async (task) => {
        if (task.state === "running") await task.shutdown("SIGTERM", TERMINATED_GRACE_MS);
        await task.destroy();
      }),
    );
    this.leave(this.state === "idle");
  }

  /** Exits; the exit files stay unless `all` (a destroyed or never-launched executor leaves nothing). */
  private leave(all: boolean): never {
    this.server?.stop();
    removeFile(this.files.socket);
    this.log("exiting");
    if (all) {
      for (const key of this.tasks.keys()) {
        const files = taskFiles(this.files, key);
        removeFile(files.exitFile);
        removeFile(files.spec);
      }
      for (const path of [this.files.exitFile, this.files.spec, this.files.log]) removeFile(path);
    }
    process.exit(0);
  }
}
