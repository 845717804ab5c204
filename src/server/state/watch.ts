/**
 * Blocking queries: a waiter sleeps until a write makes its condition true
 * (an index passed the one it knows), its time is up, its caller goes away,
 * or the server closes. Whichever comes first, it resolves once; the caller
 * then reads the state as it is.
 *
 *   wait(cond) ──> cond already true? ──yes──> resolve
 *                     │ no
 *                     ▼
 *                  parked ──(commit: cond true | timeout | abort | close)──> resolve
 */

interface Waiter {
  condition: () => boolean;
  done: () => void;
}

export class IndexWatch {
  private readonly waiters = new Set<Waiter>();

  wait(condition: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (condition() || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        condition,
        done: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", waiter.done);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, timeoutMs);
      signal?.addEventListener("abort", waiter.done, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** After a commit: wakes every waiter whose condition now holds. */
  notify(): void {
    for (const waiter of [...this.waiters]) if (waiter.condition()) waiter.done();
  }

  /** Wakes everyone (shutdown). */
  close(): void {
    for (const waiter of [...this.waiters]) waiter.done();
  }

  get size(): number {
    return this.waiters.size;
  }
}
