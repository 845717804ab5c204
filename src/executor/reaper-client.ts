/**
 * The agent's side of the host reaper (host-reaper.ts): finding the one that
 * serves the run directory, or starting it, and asking it to start executors
 * and for the exits of orphans it reaped. One link per run directory in a
 * process, shared by every driver whose executors live there.
 *
 *   ensure() ── connect to <run dir>/reaper.sock and ask `version` ──> connected
 *                 │ nothing answers
 *                 └─ spawnDetachedRole("reaper", [run dir]), own session, log <run dir>/reaper.log,
 *                    wait for its ready pipe, connect ──────────────────> connected
 *   connection lost (it died) ──> the next call starts another; executors
 *     the old one started are not the new one's children (they stay unreaped-for)
 */
import { join } from "node:path";
import { settlesWithin } from "../lib/timeout.ts";
import { RpcClient, RpcConnectionError } from "../rpc/client.ts";
import { selfArgv } from "../runtime/self.ts";
import { spawnDetachedRole } from "../runtime/detached-role.ts";
import { ensureRunDir } from "./client.ts";
import { isAlive, processStartTime } from "../stats/process.ts";
import { EXECUTOR_READY_TIMEOUT_MS, REAPER_LOG, REAPER_PROTOCOL, REAPER_SOCKET, ReaperProtocol, type OrphanExitStatus } from "./reaper-protocol.ts";

/** How long a reaper may take to listen after its spawn. */
export const REAPER_START_TIMEOUT_MS = 10_000;
/** Quick calls (version). */
const QUICK_CALL_TIMEOUT_MS = 10_000;
/** Room a spawnExecutor call gets beyond the executor's own start. */
const SPAWN_CALL_MARGIN_MS = 5_000;
/** How long terminate() waits for the reaper to leave by itself (its executors exit within a second of their destroy). */
const REAPER_LEAVE_TIMEOUT_MS = 5_000;
/** How long a SIGTERMed reaper may take to exit. */
const REAPER_EXIT_TIMEOUT_MS = 2_000;
const REAPER_EXIT_POLL_MS = 10;

/** Raised when no reaper could be reached or started: the caller starts executors itself. */
export class ReaperUnavailableError extends Error {
  override name = "ReaperUnavailableError";
}

const links = new Map<string, HostReaperLink>();

export class HostReaperLink {
  private connection: RpcClient<ReaperProtocol> | null = null;
  private connecting: Promise<RpcClient<ReaperProtocol>> | null = null;
  /** The reaper's pid once connected (a task whose parent it is can be adopted). */
  pid: number | null = null;
  /** Its start time, read when it answered: with the pid, names that process for good. */
  private startTime: number | null = null;

  private constructor(
    readonly runDir: string,
    /** The command that runs drover; this program when absent. */
    private readonly drover: readonly string[] | undefined,
  ) {}

  /** The process's link for `runDir`. */
  static for(runDir: string, drover?: readonly string[]): HostReaperLink {
    let link = links.get(runDir);
    if (!link) {
      link = new HostReaperLink(runDir, drover);
      links.set(runDir, link);
    }
    return link;
  }

  get socket(): string {
    return join(this.runDir, REAPER_SOCKET);
  }

  /** The live connection: an answering reaper's, or a new reaper's. Throws ReaperUnavailableError. */
  ensure(): Promise<RpcClient<ReaperProtocol>> {
    if (this.connection && !this.connection.isClosed) return Promise.resolve(this.connection);
    this.connecting ??= this.establish().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async establish(): Promise<RpcClient<ReaperProtocol>> {
    const found = await this.tryConnect();
    if (found) return found;
    ensureRunDir(this.runDir);
    let child;
    try {
      child = spawnDetachedRole("reaper", [this.runDir], join(this.runDir, REAPER_LOG), this.drover);
    } catch (err) {
      throw new ReaperUnavailableError(`start the host reaper: ${(err as Error).message}`);
    }
    if (!(await settlesWithin(child.ready!, REAPER_START_TIMEOUT_MS))) {
      child.kill("SIGKILL");
      throw new ReaperUnavailableError(`host reaper (pid ${child.pid}) did not listen within ${REAPER_START_TIMEOUT_MS} ms; see ${join(this.runDir, REAPER_LOG)}`);
    }
    // Ours, or the one that held the lock when ours started (ours then left).
    const connected = await this.tryConnect();
    if (connected) return connected;
    throw new ReaperUnavailableError(`no host reaper answers on ${this.socket}; see ${join(this.runDir, REAPER_LOG)}`);
  }

  private async tryConnect(): Promise<RpcClient<ReaperProtocol> | null> {
    let connection: RpcClient<ReaperProtocol>;
    try {
      connection = await RpcClient.connect(this.socket, ReaperProtocol);
    } catch {
      return null;
    }
    try {
      const version = await connection.call("version", {}, QUICK_CALL_TIMEOUT_MS);
      if (version.protocol !== REAPER_PROTOCOL) throw new Error(`it speaks protocol ${version.protocol}, this agent ${REAPER_PROTOCOL}`);
      this.pid = version.pid;
      this.startTime = processStartTime(version.pid);
      this.connection = connection;
      return connection;
    } catch {
      connection.close();
      return null;
    }
  }

  /** Starts an executor at `base` as the reaper's child; answers once it listens. */
  async spawnExecutor(base: string): Promise<{ pid: number; startTime: number }> {
    const drover = [...(this.drover ?? selfArgv([]))];
    for (let attempt = 0; ; attempt++) {
      const connection = await this.ensure();
      try {
        return await connection.call("spawnExecutor", { base, drover }, EXECUTOR_READY_TIMEOUT_MS + SPAWN_CALL_MARGIN_MS);
      } catch (err) {
        // The reaper died under the call: the next ensure() starts another, once.
        if (!(err instanceof RpcConnectionError)) throw err;
        if (attempt > 0) throw new ReaperUnavailableError(`host reaper lost during spawnExecutor: ${err.message}`);
      }
    }
  }

  /** How an orphan the reaper reaped ended; null when it saw none end within `waitMs`. */
  async exitStatus(pid: number, startTime: number, waitMs: number): Promise<OrphanExitStatus | null> {
    const connection = await this.ensure();
    return connection.call("exitStatus", { pid, startTime, waitMs }, waitMs + QUICK_CALL_TIMEOUT_MS);
  }

  /**
   * Hangs up and waits until the reaper is gone, for an agent that destroys
   * everything it ran (-dev): it leaves by itself once no executor is left;
   * one still there after REAPER_LEAVE_TIMEOUT_MS is sent SIGTERM.
   */
  async terminate(): Promise<void> {
    const { pid, startTime } = this;
    this.close();
    if (pid === null || startTime === null) return;
    const gone = async (deadline: number) => {
      while (isAlive(pid, startTime)) {
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, REAPER_EXIT_POLL_MS));
      }
      return true;
    };
    if (await gone(Date.now() + REAPER_LEAVE_TIMEOUT_MS)) return;
    process.kill(pid, "SIGTERM");
    await gone(Date.now() + REAPER_EXIT_TIMEOUT_MS);
  }

  /** Hangs up; the reaper keeps running for its executors. */
  close(): void {
    this.connection?.close();
    this.connection = null;
    links.delete(this.runDir);
  }
}
