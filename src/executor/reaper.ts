/**
 * The executor is a child subreaper: when a process of the task's tree loses
 * its parent (`sh -c 'sleep 600 &'`), it becomes the executor's child instead
 * of init's. The runtime (Bun and Deno alike) reaps only the children it
 * spawned, so each orphan that exits is reaped here, or zombies would pile up
 * for the task's whole life.
 *
 * On SIGCHLD: peek at an exited child without reaping it (waitid WNOWAIT);
 * reap it when the runtime does not track it, and look again. A child the
 * runtime tracks is left to it, and the look is repeated shortly after the
 * runtime has reaped it.
 *
 * The host reaper (host-reaper.ts) uses the same class with `onOrphanExit`:
 * before it reaps an orphan it reads the zombie's start time, so the status
 * it keeps names that one process for good.
 */
import { peekExitedChild, prctl, PR_SET_CHILD_SUBREAPER, reap } from "../runtime/libc.ts";
import { anyStartTime } from "../stats/process.ts";

/** An orphan this reaper reaped: its pid, its start time (read while it was a zombie), its raw wait status. */
export type OrphanExit = (pid: number, startTime: number | null, status: number) => void;

/** When a runtime-tracked child blocks the peek, look again after the runtime has had time to reap it. */
const RETRY_AFTER_TRACKED_MS = 20;

export class Reaper {
  /** Children spawned through the runtime (task, exec commands): it reaps these itself. */
  private readonly tracked = new Set<number>();
  private retry: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly onOrphanExit?: OrphanExit) {}

  /** Becomes a subreaper and starts reaping orphans on SIGCHLD. */
  start(): void {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) !== 0) throw new Error("prctl(PR_SET_CHILD_SUBREAPER) failed");
    process.on("SIGCHLD", () => this.reapOrphans());
  }

  track(pid: number): void {
    this.tracked.add(pid);
  }

  untrack(pid: number): void {
    this.tracked.delete(pid);
  }

  reapOrphans(): void {
    for (;;) {
      const pid = peekExitedChild();
      if (pid <= 0) return;
      if (this.tracked.has(pid)) {
        this.retry ??= setTimeout(() => {
          this.retry = null;
          this.reapOrphans();
        }, RETRY_AFTER_TRACKED_MS);
        return;
      }
      const startTime = this.onOrphanExit ? anyStartTime(pid) : null;
      const status = reap(pid);
      if (status !== null) this.onOrphanExit?.(pid, startTime, status);
    }
  }
}
