/**
 * Reports alloc status changes to the server in batches: the newest update of
 * each alloc wins, one call carries them all. A failed call keeps them for
 * the next attempt, so the server always ends up with the latest.
 *
 *   queue(update) ──(ALLOC_SYNC_DELAY_MS, coalescing)──> updateAllocs([...]) ──ok──> done
 *                                                              │ error
 *                                                              └──> retry after ALLOC_SYNC_RETRY_MS
 */
import type { Logger } from "../lib/logger.ts";
import type { AllocClientUpdate } from "../structs/api.ts";

/**
 * How long updates gather before they are sent. Short, because the server is
 * in-process and a status change should show at once; long enough that the
 * burst of events of one task start goes as one write.
 */
export const ALLOC_SYNC_DELAY_MS = 10;

/** Back-off after the server refused or failed a batch. */
export const ALLOC_SYNC_RETRY_MS = 1_000;

export class AllocSync {
  private readonly pending = new Map<string, AllocClientUpdate>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly send: (updates: AllocClientUpdate[]) => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  queue(update: AllocClientUpdate): void {
    if (this.stopped) return;
    this.pending.set(update.ID, update);
    this.schedule(ALLOC_SYNC_DELAY_MS);
  }

  /** Sends what is pending now; resolves when the server has it (or refused it). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // One batch at a time: a newer status sent beside an older one could land first and be overwritten.
    while (this.sending) await this.sending;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending.clear();
    const sending = this.send(batch)
      .then(() => undefined)
      .catch((err: unknown) => {
        for (const update of batch) if (!this.pending.has(update.ID)) this.pending.set(update.ID, update);
        this.logger.warn({ err: String(err), allocs: batch.length }, "reporting alloc status failed; retrying");
        this.schedule(ALLOC_SYNC_RETRY_MS);
      })
      .finally(() => {
        if (this.sending === sending) this.sending = undefined;
      });
    this.sending = sending;
    await sending;
  }

  /** Sends what is pending and stops accepting updates. */
  async stop(): Promise<void> {
    await this.flush();
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
  }
}
