/**
 * The `drover executor` role: supervises one task for the task's whole life,
 * whatever happens to the agent. One exists per task, so it loads only what
 * it needs (no HTTP framework, ORM or logger library).
 *
 *   drover executor <base>      files at <base>.sock, .exit.json, .spec.json (files.ts)
 *
 *   agent ── spawnSelf, own session, stdout/stderr = <base>.log ──> executor
 *     executor: child subreaper; serves <base>.sock, then closes fd 3 (ready)
 *   agent ── launch ──> executor ── spawn (cgroup, FIFOs) ──> task
 *   agent ── wait / stats / signal / exec / shutdown ──> executor
 *   agent ── execStart / execWait / execKill ──> executor: interactive sessions whose
 *     stdio the agent takes over (exec-session.ts)
 *   agent ── destroy ──> executor kills what is left, removes its files, exits
 *
 *   agent gone: the executor and the task keep running; a new agent
 *   reattaches through `version`. With no agent at all, linger.ts says when
 *   the executor may leave. SIGTERM/SIGINT to the executor stop the task
 *   first (nothing is orphaned), keep the exit file, and exit.
 */
import { agentSideOnly } from "../rpc/peer-check.ts";
import { serveRpc } from "../rpc/server.ts";
import type { UnixServer } from "../runtime/unix.ts";
import { executorFiles, removeFile, type ExecutorFiles } from "./files.ts";
import { sysClose, sysStat, sysWrite } from "../runtime/libc.ts";
import { takeReadyFd } from "../runtime/self.ts";
import { slowJitTierUp } from "../runtime/jit.ts";
import { LINGER_CHECK_MS, mayExit } from "./linger.ts";
import { ExecutorProtocol } from "./protocol.ts";
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
  const reaper = new Reaper();
  reaper.start();
  const supervisor = new Supervisor(files, reaper, log);
  new Executor(files, supervisor, log, readyFd).serve();
  // The server and timers keep the process alive; it ends through process.exit.
  return new Promise<number>(() => {});
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

class Executor {
  private server: UnixServer | null = null;
  private connections = 0;
  private unattendedSince = Date.now();
  private destroyed = false;

  constructor(
    private readonly files: ExecutorFiles,
    private readonly supervisor: Supervisor,
    private readonly log: Log,
    /** Closed once the socket listens: the agent waits for that instead of polling. */
    private readonly readyFd: number | null,
  ) {}

  serve(): void {
    const supervisor = this.supervisor;
    this.server = serveRpc(
      this.files.socket,
      ExecutorProtocol,
      {
        version: () => supervisor.version(),
        launch: (request) => supervisor.launch(request),
        wait: () => supervisor.wait(),
        signal: ({ signal }) => (supervisor.signal(signal), null),
        shutdown: ({ signal, graceMs }) => supervisor.shutdown(signal, graceMs),
        stats: () => supervisor.stats(),
        exec: ({ argv, timeoutMs }) => supervisor.exec(argv, timeoutMs),
        execStart: ({ argv, tty }, peer) => supervisor.execStart(argv, tty, peer),
        execWait: ({ session }) => supervisor.execWait(session),
        execKill: async ({ session }) => (await supervisor.execKill(session), null),
        destroy: () => this.destroy(),
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

  private hangUp(): void {
    this.connections--;
    if (this.connections > 0) return;
    this.unattendedSince = Date.now();
    if (this.destroyed) this.leave(true);
  }

  private async destroy(): Promise<null> {
    await this.supervisor.destroy();
    this.destroyed = true;
    removeFile(this.files.exitFile);
    removeFile(this.files.spec);
    setTimeout(() => this.leave(true), DESTROY_EXIT_GRACE_MS);
    return null;
  }

  private lingerCheck(): void {
    const facts = {
      state: this.supervisor.state,
      connections: this.connections,
      unattendedMs: Date.now() - this.unattendedSince,
      unreadLogBytes: this.supervisor.unreadLogBytes(),
    };
    if (!mayExit(facts)) return;
    this.log(`no agent for ${Math.round(facts.unattendedMs / 1000)} s with the task ${facts.state}; leaving`);
    void this.supervisor.destroy().then(() => this.leave(facts.state === "idle"));
  }

  private async terminate(signal: string): Promise<void> {
    this.log(`received ${signal}; stopping the task`);
    if (this.supervisor.state === "running") await this.supervisor.shutdown("SIGTERM", TERMINATED_GRACE_MS);
    await this.supervisor.destroy();
    this.leave(this.supervisor.state === "idle");
  }

  /** Exits; the exit file stays unless `all` (a destroyed or never-launched executor leaves nothing). */
  private leave(all: boolean): never {
    this.server?.stop();
    removeFile(this.files.socket);
    this.log("exiting");
    if (all) for (const path of [this.files.exitFile, this.files.spec, this.files.log]) removeFile(path);
    process.exit(0);
  }
}
