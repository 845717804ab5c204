/**
 * A task this executor took over from a dead executor (`adopt`, main.ts):
 * it is not this executor's child but the host reaper's (host-reaper.ts), so
 * the runtime cannot wait for it. A pidfd names it for good (a later process
 * with its pid is never signalled or mistaken for it); once the pidfd polls
 * readable the task has ended, and the reaper, its parent, says how.
 *
 * Loaded on the first adoption only: an executor that never adopts never pays
 * for the reaper's RPC client.
 */
import { signalNumber } from "../lib/signals.ts";
import { RpcClient } from "../rpc/client.ts";
import { errno, pidfdExited, pidfdOpen, pidfdSendSignal, sysClose } from "../runtime/libc.ts";
import type { ChildProcess, ExitStatus } from "../runtime/spawn.ts";
import { anyStartTime, descendants, isAlive, liveStat } from "../stats/process.ts";
import { REAPER_SOCKET, ReaperProtocol } from "./reaper-protocol.ts";

/** How often the adopted tasks' pidfds are looked at (one poll each): an end is reported this much later at most. */
export const ADOPTED_POLL_MS = 100;
/** How long the reaper may take to reap the ended task (its SIGCHLD handler runs at once; a loaded host gets room). */
export const ADOPTED_STATUS_WAIT_MS = 10_000;
/** Room the exitStatus call gets beyond its own wait. */
const STATUS_CALL_MARGIN_MS = 5_000;

/** How an adopted task ended; `lost` says why the real status is not known. */
export interface AdoptedExit extends ExitStatus {
  lost?: string;
}

export interface AdoptedProcess extends ChildProcess {
  readonly exited: Promise<AdoptedExit>;
}

/**
 * Watches the process `pid` that started at `startTime`, a child of the host
 * reaper serving `runDir`. Throws when it is not (or no longer) that process.
 */
export function watchAdopted(pid: number, startTime: number, runDir: string): AdoptedProcess {
  const pidfd = pidfdOpen(pid);
  if (pidfd < 0) throw new Error(`pid ${pid}: pidfd_open failed (errno ${errno()})`);
  // Checked after the pidfd is held: from here on the pid cannot name another process.
  if (anyStartTime(pid) !== startTime || !isAlive(pid)) {
    sysClose(pidfd);
    throw new Error(`pid ${pid} is no longer the task (it ended, or its pid names another process)`);
  }
  let open = true;
  const exited = new Promise<AdoptedExit>((resolve) => {
    watching.set(pidfd, () => {
      open = false;
      sysClose(pidfd);
      void reaperStatus(runDir, pid, startTime).then(resolve);
    });
    watchAll();
  });
  return {
    pid,
    exited,
    stdout: null,
    stderr: null,
    kill(signal = "SIGTERM") {
      if (open && pidfdSendSignal(pidfd, signalNumber(signal)) !== 0) throw new Error(`signal pid ${pid}: errno ${errno()}`);
    },
    unref() {},
  };
}

/** Every adopted task's pidfd, with what to do once it has exited: one timer looks at them all. */
const watching = new Map<number, () => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function watchAll(): void {
  timer ??= setInterval(() => {
    for (const [pidfd, ended] of watching) {
      if (!pidfdExited(pidfd)) continue;
      watching.delete(pidfd);
      ended();
    }
    if (watching.size > 0 || timer === null) return;
    clearInterval(timer);
    timer = null;
  }, ADOPTED_POLL_MS);
}

async function reaperStatus(runDir: string, pid: number, startTime: number): Promise<AdoptedExit> {
  let client: RpcClient<ReaperProtocol> | undefined;
  try {
    client = await RpcClient.connect(`${runDir}/${REAPER_SOCKET}`, ReaperProtocol);
    const exit = await client.call("exitStatus", { pid, startTime, waitMs: ADOPTED_STATUS_WAIT_MS }, ADOPTED_STATUS_WAIT_MS + STATUS_CALL_MARGIN_MS);
    return exit ?? { exitCode: -1, signal: 0, lost: `the host reaper saw no end of pid ${pid} within ${ADOPTED_STATUS_WAIT_MS} ms` };
  } catch (err) {
    return { exitCode: -1, signal: 0, lost: `the exit status of pid ${pid} from the host reaper: ${(err as Error).message}` };
  } finally {
    client?.close();
  }
}

/**
 * An adopted task's processes when it has no cgroup: the task and its
 * descendants, and what it left in its process group under the reaper (its
 * orphans are the reaper's children now, not this executor's).
 */
export function adoptedTree(pid: number, reaperPid: number): number[] {
  const own = [pid, ...descendants(pid)];
  const grouped = descendants(reaperPid).filter((each) => liveStat(each)?.group === pid);
  return [...new Set([...own, ...grouped])].filter((each) => isAlive(each));
}
