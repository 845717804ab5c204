/**
 * Reports alloc status changes to the server in batches: the newest update of
 * each alloc wins, one call carries them all. A failed call keeps them for
 * the next attempt, so the server always ends up with the latest.
 *
 *   queue(update) ──(gathered: batchHoldMs, coalescing)──> updateAllocs([...]) ──ok──> done
 *                                                              │ error
 *                                                              └──> retry after ALLOC_SYNC_RETRY_MS
 *
 * How long a batch gathers follows how many allocs are starting (the client
 * said it starts them, or their newest report says pending, and none since
 * says otherwise): with few, a change goes after
 * ALLOC_SYNC_DELAY_MS; while many start at once (a thousand placed
 * together), a batch gathers for longer, up to Nomad's own
 * ALLOC_SYNC_MAX_DELAY_MS. Each server write wakes every blocking query on
 * the allocs table, and one on a job answers all of that job's allocs, so a
 * write every 10 ms while a thousand allocs start cost the agent (and every
 * watcher, the UI's job page too) a full answer per write. The hold is
 * looked at again as the batch gathers: once the allocs starting are few
 * again (the last of a burst running), the batch goes. A report the server
 * acts on never waits longer than ALLOC_SYNC_DELAY_MS: an alloc that ended
 * frees its room for the next placement (a dispatch stream that falls
 * behind would otherwise hold its ends and fall further), and a health
 * decision moves a deployment.
 */
import type { Logger } from "../lib/logger.ts";
import { isClientTerminal } from "../structs/alloc.ts";
import type { AllocClientUpdate } from "../structs/api.ts";

/**
 * How long updates gather before they are sent when few allocs start. Short,
 * because the server is in-process and a status change should show at once;
 * long enough that the burst of events of one task start goes as one write.
 */
export const ALLOC_SYNC_DELAY_MS = 10;

/** The longest a batch gathers, however many allocs start: Nomad's client sends every 200 ms. */
export const ALLOC_SYNC_MAX_DELAY_MS = 200;

/**
 * How much longer a batch may gather per alloc starting. A batch holds past
 * ALLOC_SYNC_DELAY_MS only with more than five allocs starting at once (a
 * dispatch stream of 40 jobs a second has one or two), and for the full
 * ALLOC_SYNC_MAX_DELAY_MS from a hundred.
 */
export const ALLOC_SYNC_MS_PER_STARTING = 2;

/** Back-off after the server refused or failed a batch. */
export const ALLOC_SYNC_RETRY_MS = 1_000;

/** A report the server acts on (see above): it ends the hold of its batch. */
function isUrgent(update: AllocClientUpdate): boolean {
  return isClientTerminal(update.ClientStatus) || (update.DeploymentStatus?.Healthy ?? null) !== null;
}

/** How long a batch may gather while `starting` allocs are starting. */
export function batchHoldMs(starting: number): number {
  return Math.min(ALLOC_SYNC_MAX_DELAY_MS, Math.max(ALLOC_SYNC_DELAY_MS, starting * ALLOC_SYNC_MS_PER_STARTING));
}

export class AllocSync {
  private readonly pending = new Map<string, AllocClientUpdate>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> | undefined;
  private stopped = false;
  /** When the first update of the batch being gathered came. */
  private gatheringSince: number | undefined;
  /** The batch being gathered holds a report the server acts on: it goes after ALLOC_SYNC_DELAY_MS. */
  private urgent = false;
  /** The allocs starting: told by the client, or their newest report says pending. */
  private readonly starting = new Set<string>();

  constructor(
    private readonly send: (updates: AllocClientUpdate[]) => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  queue(update: AllocClientUpdate): void {
    if (this.stopped) return;
    this.pending.set(update.ID, update);
    if (update.ClientStatus === "pending") this.starting.add(update.ID);
    else this.starting.delete(update.ID);
    this.gatheringSince ??= performance.now();
    this.urgent ||= isUrgent(update);
    this.schedule(ALLOC_SYNC_DELAY_MS);
  }

  /**
   * Allocs the client is about to start, before any of them reports: a
   * thousand placed together report one after the other as each gets its
   * turn, so their reports alone would show only the few starting just then.
   * Each counts until a report of its own says other than pending.
   */
  willStart(allocIds: Iterable<string>): void {
    if (this.stopped) return;
    for (const id of allocIds) this.starting.add(id);
  }

  /** An alloc the client let go of (destroyed): however its last report read, it no longer starts. */
  forget(allocId: string): void {
    this.starting.delete(allocId);
  }

  /** Sends what is pending now; resolves when the server has it (or refused it). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // One batch at a time: a newer status sent beside an older one could land first and be overwritten.
    while (this.sending) await this.sending;
    this.gatheringSince = undefined;
    this.urgent = false;
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
      const wait = this.remainingHoldMs();
      // Looked at again at least every ALLOC_SYNC_DELAY_MS: the hold shortens as the allocs start.
      // A timer may fire a fraction early: less than a millisecond left is no reason for another turn.
      if (wait >= 1) this.schedule(Math.min(wait, ALLOC_SYNC_DELAY_MS));
      else void this.flush();
    }, delayMs);
  }

  /** How much longer the batch being gathered waits, by how many allocs start now. */
  private remainingHoldMs(): number {
    if (this.gatheringSince === undefined) return 0;
    return this.gatheringSince + (this.urgent ? ALLOC_SYNC_DELAY_MS : batchHoldMs(this.starting.size)) - performance.now();
  }
}
