/**
 * Reports alloc status changes to the server in batches: the newest update of
 * each alloc wins, one call carries them all. A failed call keeps them for
 * the next attempt, so the server always ends up with the latest.
 *
 *   queue(update) ──(gathered: batchHoldMs, coalescing)──> updateAllocs([...]) ──ok──> done
 *                                                              │ error
 *                                                              └──> retry after ALLOC_SYNC_RETRY_MS
 *
 * How long a batch gathers follows how many allocs are reporting: a lone
 * change goes after ALLOC_SYNC_DELAY_MS; while many allocs report at once (a
 * thousand starting), each batch may gather for longer, up to Nomad's own
 * ALLOC_SYNC_MAX_DELAY_MS. Each server write wakes every blocking query on
 * the allocs table, and one on a job answers all of that job's allocs, so a
 * write every 10 ms while a thousand allocs start cost the agent (and every
 * watcher, the UI's job page too) a full answer per write. A held batch still
 * goes once its allocs fall quiet for ALLOC_SYNC_DELAY_MS: the last report of
 * a burst is not held for the whole window.
 */
import type { Logger } from "../lib/logger.ts";
import type { AllocClientUpdate } from "../structs/api.ts";

/**
 * How long updates gather before they are sent when few allocs report. Short,
 * because the server is in-process and a status change should show at once;
 * long enough that the burst of events of one task start goes as one write.
 * Also the quiet spell after which a longer batch goes early.
 */
export const ALLOC_SYNC_DELAY_MS = 10;

/** The longest a batch gathers, however many allocs report: Nomad's client sends every 200 ms. */
export const ALLOC_SYNC_MAX_DELAY_MS = 200;

/**
 * How much longer the next batch may gather per alloc the last batch carried.
 * Batches grow only while more than one alloc per this many ms reports (250 a
 * second); below that (a dispatch stream of 40 jobs a second reports about
 * 120 changes a second) every batch goes after ALLOC_SYNC_DELAY_MS.
 */
export const ALLOC_SYNC_MS_PER_ALLOC = 4;

/** Back-off after the server refused or failed a batch. */
export const ALLOC_SYNC_RETRY_MS = 1_000;

/**
 * How long a new batch may gather, given the batch before it: `lastSize`
 * allocs, sent `sinceLastMs` ago. A batch sent longer ago than the longest
 * hold ended a burst, so the next is a lone change again.
 */
export function batchHoldMs(lastSize: number, sinceLastMs: number): number {
  if (sinceLastMs >= ALLOC_SYNC_MAX_DELAY_MS) return ALLOC_SYNC_DELAY_MS;
  return Math.min(ALLOC_SYNC_MAX_DELAY_MS, Math.max(ALLOC_SYNC_DELAY_MS, lastSize * ALLOC_SYNC_MS_PER_ALLOC));
}

export class AllocSync {
  private readonly pending = new Map<string, AllocClientUpdate>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> | undefined;
  private stopped = false;
  /** The batch being gathered: when its first update came, how long it may gather, when its last came. */
  private gathering: { since: number; holdMs: number; lastAt: number } | undefined;
  /** The last batch sent: how many allocs, and when. */
  private last = { size: 0, at: -Infinity };

  constructor(
    private readonly send: (updates: AllocClientUpdate[]) => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  queue(update: AllocClientUpdate): void {
    if (this.stopped) return;
    this.pending.set(update.ID, update);
    const now = performance.now();
    if (this.gathering) this.gathering.lastAt = now;
    else this.gathering = { since: now, holdMs: batchHoldMs(this.last.size, now - this.last.at), lastAt: now };
    this.schedule(ALLOC_SYNC_DELAY_MS);
  }

  /** Sends what is pending now; resolves when the server has it (or refused it). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // One batch at a time: a newer status sent beside an older one could land first and be overwritten.
    while (this.sending) await this.sending;
    this.gathering = undefined;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.last = { size: batch.length, at: performance.now() };
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
      const wait = this.remainingHoldMs();
      // A timer may fire a fraction early: less than a millisecond left is no reason for another turn.
      if (wait >= 1) this.schedule(wait);
      else void this.flush();
    }, delayMs);
  }

  /** How much longer the batch being gathered waits: until its hold ends or its allocs fall quiet, whichever is first. */
  private remainingHoldMs(): number {
    if (!this.gathering) return 0;
    const { since, holdMs, lastAt } = this.gathering;
    return Math.min(since + holdMs, lastAt + ALLOC_SYNC_DELAY_MS) - performance.now();
  }
}
