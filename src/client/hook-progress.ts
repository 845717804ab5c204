/**
 * The write of a runner's hook progress (which hooks are done, their data),
 * shared by the alloc and task runners' set-up hooks: quick hooks (most:
 * directories, env) are written once when they end, not once each, which
 * was six or seven of a task start's state writes (issue 35), while a slow
 * hook's result (an artifact fetched) is written before the next hook runs.
 *
 * An agent that dies before the write reruns the hooks that finished since
 * the last one, as a crash inside a hook reruns that hook: set-up hooks are
 * idempotent for that reason (as Nomad's). The runners write it before
 * anything starts on it (a task, the driver), so a live task always has
 * its hooks' progress stored.
 */

/**
 * Progress is written at once when the last write is older than this.
 * Seconds, not less: while a thousand tasks start at once, one task's quick
 * hooks take that long between them, each waiting its turn on the event loop.
 */
export const HOOK_PROGRESS_SAVE_MS = 5_000;

export class HookProgress {
  private unsaved = false;
  private savedAt = performance.now();

  constructor(private readonly save: () => void) {}

  /** A hook's progress changed: written now when the last write is older than HOOK_PROGRESS_SAVE_MS. */
  changed(): void {
    this.unsaved = true;
    if (performance.now() - this.savedAt >= HOOK_PROGRESS_SAVE_MS) this.flush();
  }

  /** Writes what changed since the last write, if anything did. */
  flush(): void {
    if (!this.unsaved) return;
    this.save();
    this.unsaved = false;
    this.savedAt = performance.now();
  }
}
