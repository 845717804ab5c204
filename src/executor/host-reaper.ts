/**
 * The `drover reaper <run dir>` role: one per data dir, the parent of every
 * executor the agent starts, and a child subreaper. When an executor dies,
 * its tasks are reparented here instead of to init, so their exit status is
 * not lost: the reaper reaps each orphan, keeps how it ended (pid + start
 * time -> exit code or signal, in memory, bounded) and answers `exitStatus`
 * for it. The agent then hands a dead executor's live tasks to another
 * executor (`adopt`), which watches them by pidfd and asks here how they
 * ended.
 *
 *   agent ── spawnSelf, own session, readyPipe ──> reaper (flock on reaper.lock: one per run dir)
 *   agent ── spawnExecutor(base) ──> reaper ── spawnSelf ──> executor (its child)
 *   executor dies ──> its tasks' parent is the reaper ──> reaped here, status kept
 *
 * It must cost little and almost never change: executors and agents of other
 * versions talk to it, and it does no work per task unless one is orphaned.
 * It leaves as soon as nothing needs it: no child, no kept status, no
 * connection (an agent holds one while it runs); the next agent or executor
 * start brings it back in milliseconds.
 */
import { dirname } from "node:path";
import { agentSideOnly } from "../rpc/peer-check.ts";
import { serveRpc } from "../rpc/server.ts";
import { VERSION } from "../lib/version.ts";
import { settlesWithin } from "../lib/timeout.ts";
import { decodeWaitStatus, flock, LOCK_EX, LOCK_NB, O_CLOEXEC, O_CREAT, O_RDWR, sysClose, sysOpen, sysStat, sysWrite } from "../runtime/libc.ts";
import { takeReadyFd } from "../runtime/self.ts";
import { spawnDetachedRole } from "../runtime/detached-role.ts";
import { descendants, processStartTime } from "../stats/process.ts";
import { removeFile } from "./files.ts";
import { Reaper } from "./reaper.ts";
import { EXECUTOR_READY_TIMEOUT_MS, REAPER_LOCK, REAPER_PROTOCOL, REAPER_SOCKET, ReaperProtocol, type OrphanExitStatus } from "./reaper-protocol.ts";

/** Most orphan exits kept: a host's worth of tasks whose executors died at once, with room. */
const KEPT_EXITS_MAX = 4_096;
/** How long an orphan's exit is kept: the agent adopts or asks within seconds; an agent down for longer finds its exit gone and restarts the task. */
const KEPT_EXIT_MS = 15 * 60_000;
/** How often the reaper looks whether anything still needs it (kept exits age out meanwhile). */
const IDLE_CHECK_MS = 10_000;
/** How long a new reaper waits for the lock of one that is leaving (its last connection just closed). */
const LOCK_WAIT_MS = 2_000;
const LOCK_RETRY_MS = 25;

const USAGE = "usage: drover reaper <run dir>";

type Log = (line: string) => void;

interface KeptExit extends OrphanExitStatus {
  at: number;
}

export async function main(argv: readonly string[]): Promise<number> {
  const readyFd = takeReadyFd();
  if (argv.length !== 1 || !argv[0]!.startsWith("/")) {
    sysWrite(2, `${USAGE}\n`);
    return 2;
  }
  const runDir = argv[0]!;
  const log: Log = (line) => sysWrite(2, `${new Date().toISOString()} reaper[${process.pid}] ${line}\n`);
  // Held for the process's life; the kernel drops it however the reaper dies.
  const lockFd = sysOpen(`${runDir}/${REAPER_LOCK}`, O_RDWR | O_CREAT | O_CLOEXEC, 0o600);
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (flock(lockFd, LOCK_EX | LOCK_NB) !== 0) {
    if (Date.now() >= deadline) {
      log("another reaper serves this run directory; leaving");
      return 0;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
  new HostReaper(runDir, log).serve(isPipe(readyFd) ? readyFd : null);
  return new Promise<number>(() => {});
}

function isPipe(fd: number | null): fd is number {
  try {
    return fd !== null && sysStat(fd).kind === "fifo";
  } catch {
    return false;
  }
}

class HostReaper {
  /** Orphans' exits by `pid:startTime`, oldest first. */
  private readonly exits = new Map<string, KeptExit>();
  /** exitStatus calls waiting for an orphan's end. */
  private readonly waiters = new Map<string, Set<(exit: OrphanExitStatus) => void>>();
  private readonly reaper = new Reaper((pid, startTime, status) => this.keep(pid, startTime, status));
  private connections = 0;
  private readonly socket: string;

  constructor(
    private readonly runDir: string,
    private readonly log: Log,
  ) {
    this.socket = `${runDir}/${REAPER_SOCKET}`;
  }

  serve(readyFd: number | null): void {
    this.reaper.start();
    removeFile(this.socket);
    serveRpc(
      this.socket,
      ReaperProtocol,
      {
        version: () => ({ protocol: REAPER_PROTOCOL, version: VERSION, pid: process.pid }),
        spawnExecutor: ({ base, drover }) => this.spawnExecutor(base, drover),
        exitStatus: ({ pid, startTime, waitMs }) => this.exitStatus(pid, startTime, waitMs),
      },
      {
        open: () => this.connections++,
        close: () => {
          this.connections--;
          this.leaveIfUnneeded();
        },
      },
      agentSideOnly((why) => this.log(`refused a connection: ${why}`)),
    );
    setInterval(() => this.leaveIfUnneeded(), IDLE_CHECK_MS);
    process.on("SIGHUP", () => {});
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => this.leave(`received ${signal}`));
    this.log(`serving ${this.socket}`);
    if (readyFd !== null) sysClose(readyFd);
  }

  private async spawnExecutor(base: string, drover: string[]): Promise<{ pid: number; startTime: number }> {
    if (dirname(base) !== this.runDir) throw new Error(`base: ${base} is not a name in ${this.runDir}`);
    const child = spawnDetachedRole("executor", [base], `${base}.log`, drover);
    const { pid } = child;
    // The runtime reaps the executors it spawned; the orphan reaper leaves them to it.
    this.reaper.track(pid);
    void child.exited.then(() => {
      this.reaper.untrack(pid);
      this.leaveIfUnneeded();
    });
    const startTime = processStartTime(pid) ?? 0;
    if (!(await settlesWithin(child.ready!, EXECUTOR_READY_TIMEOUT_MS))) {
      child.kill("SIGKILL");
      throw new Error(`executor (pid ${pid}) did not listen within ${EXECUTOR_READY_TIMEOUT_MS} ms; see ${base}.log`);
    }
    return { pid, startTime };
  }

  private keep(pid: number, startTime: number | null, status: number): void {
    if (startTime === null) return;
    const exit = decodeWaitStatus(status);
    const key = `${pid}:${startTime}`;
    this.exits.delete(key);
    this.exits.set(key, { ...exit, at: Date.now() });
    this.prune();
    for (const resolve of this.waiters.get(key) ?? []) resolve(exit);
    this.waiters.delete(key);
  }

  /** Drops exits past their age, and the oldest beyond the count. */
  private prune(): void {
    const oldest = Date.now() - KEPT_EXIT_MS;
    for (const [key, exit] of this.exits) {
      if (this.exits.size <= KEPT_EXITS_MAX && exit.at >= oldest) break;
      this.exits.delete(key);
    }
  }

  private exitStatus(pid: number, startTime: number, waitMs: number): Promise<OrphanExitStatus | null> | OrphanExitStatus | null {
    // Its SIGCHLD may not have been handled yet.
    this.reaper.reapOrphans();
    const key = `${pid}:${startTime}`;
    const kept = this.exits.get(key);
    if (kept) return { exitCode: kept.exitCode, signal: kept.signal };
    if (waitMs === 0) return null;
    return new Promise((resolve) => {
      const waiting = this.waiters.get(key) ?? new Set();
      this.waiters.set(key, waiting);
      const settle = (exit: OrphanExitStatus | null) => {
        clearTimeout(timer);
        waiting.delete(settle);
        if (waiting.size === 0 && this.waiters.get(key) === waiting) this.waiters.delete(key);
        resolve(exit);
      };
      const timer = setTimeout(() => settle(null), waitMs);
      waiting.add(settle);
    });
  }

  /** Leaves once no agent is connected, no process is its child and no orphan's exit is kept. */
  private leaveIfUnneeded(): void {
    this.prune();
    if (this.connections > 0 || this.exits.size > 0 || descendants(process.pid).length > 0) return;
    this.leave("nothing to reap and no agent");
  }

  private leave(why: string): never {
    this.log(`${why}; exiting`);
    removeFile(this.socket);
    process.exit(0);
  }
}
