/**
 * The server's one timer for work that falls due at a time of day rather
 * than on a request: a drain's deadline, a deployment's progress deadline,
 * a failed alloc's delayed reschedule (a pending follow-up evaluation), a
 * periodic job's next launch. Each is a keyed due time, kept up to date
 * from what every commit changed (so the work per write is proportional to
 * the write), and the timer is armed for the earliest.
 *
 *   commit ──> changed rows ──> set(key, due | undefined) ──> re-arm for the earliest
 *   timer fires ──> the due keys are taken out ──> run(keys): one write doing their work
 *                     (its own commit sets them again if they are still due later)
 *                     │ the write fails (a full disk)
 *                     └──> the keys come back RETRY_MS later
 *
 * A due time that passed while the agent was down is found when the server
 * opens and runs at once.
 */

/** setTimeout's largest delay (~24.8 days); a later due time re-arms when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Fire this long after the due time, so the write it triggers surely sees the time passed. */
const DUE_SLACK_MS = 5;
/** After a failed write (a full disk): the same work is tried again this much later. */
const RETRY_MS = 1000;

export class DueWork {
  private readonly due = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedFor: number | undefined;
  private stopped = false;

  constructor(private readonly run: (keys: string[]) => void) {}

  /** Sets (or with undefined clears) when `key`'s work is due, in ms since the epoch. */
  set(key: string, atMs: number | undefined): void {
    if (atMs === undefined) this.due.delete(key);
    else this.due.set(key, atMs);
  }

  /** The due time of `key`, if any (for tests and diagnostics). */
  get(key: string): number | undefined {
    return this.due.get(key);
  }

  /** Arms the timer for the earliest due time; call after a batch of set(). */
  arm(): void {
    if (this.stopped) return;
    let earliest: number | undefined;
    for (const at of this.due.values()) if (earliest === undefined || at < earliest) earliest = at;
    if (earliest === this.armedFor && this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = earliest;
    if (earliest === undefined) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, earliest - Date.now()) + DUE_SLACK_MS);
    this.timer = setTimeout(() => this.runDue(), delay);
    this.timer.unref?.();
  }

  /** Runs what is due now, then re-arms (the timer calls this; so does the server when it opens). */
  runDue(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = undefined;
    const now = Date.now();
    const keys = [...this.due].filter(([, at]) => at <= now).map(([key]) => key);
    for (const key of keys) this.due.delete(key);
    if (keys.length > 0) {
      try {
        this.run(keys);
      } catch {
        for (const key of keys) if (!this.due.has(key)) this.due.set(key, now + RETRY_MS);
      }
    }
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
