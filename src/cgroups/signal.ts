/** Signalling a cgroup's processes by the pids it lists. */

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
