/**
 * The loop that moves every registered stream's bytes on the JS thread.
 * Between moves it waits for the FIFOs with the runtime's readiness waiter
 * (runtime/event-loop.ts), which also ends a wait the moment the event loop
 * has work (an RPC, a signal), so answers never wait behind the pump:
 *
 *   tick ─► wait(FIFOs)
 *     ├─ FIFOs ready ─► each moves ≤ ROUND_BUDGET (a flooding task cannot starve
 *     │                 the others) ─► every pipe brought little: sleep ≤ 2 ms
 *     │                 ─► wait again, until the tick has run TICK_MS
 *     ├─ event loop busy ─► end the tick at once (the RPC is answered now)
 *     └─ nothing for IDLE_WAIT_MS ─► end the tick
 *   ─► setImmediate(tick)                         no streams: stop until add()
 *
 * Where the waiter cannot see the event loop, a wait lasts at most TICK_MS
 * instead: RPC answers then take up to that long.
 *
 * A stream whose move fails (disk full, a log file replaced) sits out for
 * STALL_RETRY_MS; its bytes wait in its pipe and the task blocks when that is
 * full, which loses nothing.
 */
import { newReadinessWaiter } from "../runtime/event-loop.ts";
import { usleep } from "../runtime/libc.ts";
import { errorText, log } from "./log.ts";
import type { LogStream } from "./log-stream.ts";

/**
 * Longest a busy tick keeps the JS thread: where the waiter sees the event
 * loop, an RPC ends a tick early anyway; elsewhere this bounds RPC latency.
 */
export const TICK_MS = 20;

/** Longest an idle tick waits when the event loop can end it: one wake-up a second at rest. */
export const IDLE_WAIT_MS = 1_000;

/** Bytes one stream may move per round: one full 1 MiB pipe, then the next stream's turn. */
export const ROUND_BUDGET = 1 << 20;

/**
 * After a round in which no stream brought a quarter of its pipe, the pump
 * sleeps a little before it waits again, so the pipes gather a batch.
 * A wait ends at a pipe's first byte: a task writing in 8 KiB pieces (a shell
 * pipeline's, `yes | head`) woke the pump about 35 times per MiB, and the
 * wake-ups cost more than the bytes (1.05 CPU s per GiB, cat's 0.88; with the
 * sleep about 0.5). The measure is the fullest stream's share of its pipe, not
 * the round's total: twenty tasks writing 8 KiB pieces bring plenty in all
 * but little each, and every stream's bytes cost a splice of their own (20
 * tasks took about 5,800 splices per GiB measured by the total, 2,300 by the
 * fullest stream).
 * The sleep adapts to the writers: a round after it in which some pipe was
 * half full halves it (a fast writer must not find its pipe full and block),
 * one in which every pipe held under an eighth doubles it, between these
 * bounds. The upper bound lets a task writing 25 MB/s (one of 20 sharing
 * 500 MB/s) gather 50 KB; it is also the most a quiet task's next line waits
 * beyond its wait, well inside the 50 ms fairness goal. A line already there
 * has landed before any sleep.
 */
export const GATHER_MAX_US = 2_000;
export const GATHER_MIN_US = 50;
/** The fullest stream's bytes in a round, as a fraction of its pipe: below SMALL the round sleeps; see above for the rest. */
const GATHER_SMALL = 1 / 4;
const GATHER_FULL = 1 / 2;
const GATHER_SPARSE = 1 / 8;

/**
 * The next gather sleep after a round that followed one (`brought`: the
 * fullest stream's bytes, in pipes): halved when a pipe was half full,
 * doubled when every pipe held under an eighth. Whole microseconds: usleep
 * takes an unsigned integer, and Deno's FFI throws on 62.5 (2000 halved five
 * times) where Bun's truncates.
 */
export function tunedGatherUs(currentUs: number, brought: number): number {
  if (brought >= GATHER_FULL) return Math.max(GATHER_MIN_US, Math.floor(currentUs / 2));
  if (brought < GATHER_SPARSE) return Math.min(GATHER_MAX_US, currentUs * 2);
  return currentUs;
}

/** How long a stream whose writes failed waits before it is tried again. */
export const STALL_RETRY_MS = 1_000;

export class Pump {
  private readonly streams = new Set<LogStream>();
  private readonly stalledUntil = new Map<LogStream, number>();
  private readonly waiter = newReadinessWaiter((message, fields) => log("warn", message, { ...fields, tickMs: TICK_MS }));
  /** The streams the waiter watches, by FIFO descriptor: every stream but the stalled ones. */
  private readonly watched = new Map<number, LogStream>();
  private gatherUs = GATHER_MAX_US;
  /** The round now running follows a gather sleep: what it finds tunes the next sleep. */
  private gathered = false;
  private scheduled = false;
  private stopped = false;

  /** Starts pumping an opened stream. */
  add(stream: LogStream): void {
    this.streams.add(stream);
    this.watch(stream);
    this.schedule();
  }

  /** Stops pumping a stream; call it before closing the stream. */
  remove(stream: LogStream): void {
    this.streams.delete(stream);
    this.stalledUntil.delete(stream);
    this.unwatch(stream);
  }

  stop(): void {
    this.stopped = true;
    this.waiter.wake();
  }

  private watch(stream: LogStream): void {
    this.watched.set(stream.fd, stream);
    this.waiter.watch(stream.fd);
  }

  private unwatch(stream: LogStream): void {
    if (this.watched.get(stream.fd) !== stream) return;
    this.watched.delete(stream.fd);
    this.waiter.unwatch(stream.fd);
  }

  private schedule(delayMs = 0): void {
    if (this.scheduled || this.stopped || this.streams.size === 0) return;
    this.scheduled = true;
    const run = () =>
      void this.tick().then((next) => {
        this.scheduled = false;
        this.schedule(next);
      });
    if (delayMs > 0) setTimeout(run, delayMs);
    else setImmediate(run);
  }

  /** One tick; returns how long to wait before the next (0: at once). */
  private async tick(): Promise<number> {
    const started = performance.now();
    let moved = false;
    for (;;) {
      this.retryStalled();
      if (this.watched.size === 0) return this.untilFirstRetry();
      const elapsed = performance.now() - started;
      if (moved && elapsed >= TICK_MS) return 0;
      const timeout = moved ? Math.ceil(TICK_MS - elapsed) : this.idleTimeout();
      const ready = await this.waiter.wait(timeout);
      if (this.stopped || ready < 0 || (ready === 0 && !this.waiter.loopBusy)) return 0;
      let fullest = 0;
      for (const fd of this.waiter.ready) {
        // A wait that does not block the JS thread may end after a stream was removed.
        const stream = this.watched.get(fd);
        if (!stream) continue;
        const bytes = this.moveOne(stream);
        if (stream.capacity > 0) fullest = Math.max(fullest, bytes / stream.capacity);
        moved = true;
      }
      this.gather(fullest);
      if (this.waiter.loopBusy) return 0;
    }
  }

  /** Tunes the gather sleep by what the round after the last one brought, then sleeps when this round brought little (`brought`: the fullest stream's bytes, in pipes). */
  private gather(brought: number): void {
    if (this.gathered) this.gatherUs = tunedGatherUs(this.gatherUs, brought);
    this.gathered = brought > 0 && brought < GATHER_SMALL && !this.waiter.loopBusy;
    if (this.gathered) usleep(this.gatherUs);
  }

  private idleTimeout(): number {
    const limit = this.waiter.yieldsToLoop ? IDLE_WAIT_MS : TICK_MS;
    return this.stalledUntil.size > 0 ? Math.min(limit, this.untilFirstRetry()) : limit;
  }

  private moveOne(stream: LogStream): number {
    try {
      return stream.move(ROUND_BUDGET);
    } catch (err) {
      log("error", "log stream stalled", { fifo: stream.fifoPath, error: errorText(err), retryMs: STALL_RETRY_MS });
      this.stalledUntil.set(stream, performance.now() + STALL_RETRY_MS);
      this.unwatch(stream);
      return 0;
    }
  }

  private untilFirstRetry(): number {
    const first = Math.min(...this.stalledUntil.values());
    return Math.max(1, Math.ceil(first - performance.now()));
  }

  /** Watches again the stalled streams whose wait is over. */
  private retryStalled(): void {
    if (this.stalledUntil.size === 0) return;
    const now = performance.now();
    for (const [stream, until] of this.stalledUntil) {
      if (until > now) continue;
      this.stalledUntil.delete(stream);
      this.watch(stream);
    }
  }
}
