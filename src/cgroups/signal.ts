/** Signalling a cgroup's processes, and the freeze that keeps them from forking meanwhile. */

/** Sends `signal` to each pid; a pid that is already gone is skipped. */
export function signalEach(pids: readonly number[], signal: NodeJS.Signals | number): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Exited between listing and signalling.
    }
  }
}

/**
 * How long a freeze may take to settle before the kill goes ahead unfrozen;
 * emptyCgroup() repeats the kill for whatever forked meanwhile.
 */
const FREEZE_SETTLE_MS = 1_000;
/** How often a settling freeze is looked at. */
const FREEZE_POLL_MS = 1;

/** Waits until `frozen()` holds, or FREEZE_SETTLE_MS has passed. */
export async function settleFreeze(frozen: () => boolean): Promise<void> {
  const deadline = Date.now() + FREEZE_SETTLE_MS;
  while (Date.now() < deadline && !frozen()) await new Promise((resolve) => setTimeout(resolve, FREEZE_POLL_MS));
}
