/**
 * The loop that moves every registered stream's bytes, on the JS thread.
 * Bun has no readiness callback for arbitrary fds, so a tick blocks in
 * poll(2) over all FIFOs, moves what is ready, and gives the event loop a
 * turn (RPC) at least every TICK_MS:
 *
 *   tick ─► poll(all FIFOs, until the tick's deadline) ─► each ready stream:
 *     │        move ≤ ROUND_BUDGET (so a flooding task cannot starve the others)
 *     └─ deadline passed ─► setImmediate(tick)        no streams: stop until add()
 *
 * A stream whose move fails (disk full, a log file replaced) sits out for
 * STALL_RETRY_MS; its bytes wait in its pipe and the task blocks when that is
 * full, which loses nothing.
 */
import { PollSet } from "../runtime/libc.ts";
import { errorText, log } from "./log.ts";
import type { LogStream } from "./log-stream.ts";

/**
 * Longest the event loop waits for a turn: bounds RPC latency (a flush or
 * register answers within it) and sets the idle wake-up rate (a poll over
 * a few hundred fds, 50 times a second, costs next to nothing).
 */
export const TICK_MS = 20;

/** Bytes one stream may move per poll round: one full 1 MiB pipe, then the next stream's turn. */
export const ROUND_BUDGET = 1 << 20;

/** How long a stream whose writes failed waits before it is tried again. */
export const STALL_RETRY_MS = 1_000;

export class Pump {
  private readonly streams = new Set<LogStream>();
  private readonly stalledUntil = new Map<LogStream, number>();
  private readonly pollSet = new PollSet();
  private polled: LogStream[] = [];
  private dirty = true;
  private scheduled = false;
  private stopped = false;

  add(stream: LogStream): void {
    this.streams.add(stream);
    this.dirty = true;
    this.schedule();
  }

  remove(stream: LogStream): void {
    this.streams.delete(stream);
    this.stalledUntil.delete(stream);
    this.dirty = true;
  }

  stop(): void {
    this.stopped = true;
  }

  private schedule(delayMs = 0): void {
    if (this.scheduled || this.stopped || this.streams.size === 0) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.schedule(this.tick());
    };
    if (delayMs > 0) setTimeout(run, delayMs);
    else setImmediate(run);
  }

  /** One tick; returns how long to wait before the next (0: at once). */
  private tick(): number {
    const deadline = performance.now() + TICK_MS;
    for (;;) {
      this.refresh();
      if (this.polled.length === 0) return this.untilFirstRetry();
      const remaining = Math.max(0, Math.ceil(deadline - performance.now()));
      if (this.pollSet.wait(remaining) > 0) {
        this.polled.forEach((stream, i) => {
          if (this.pollSet.revents(i) !== 0) this.moveOne(stream);
        });
      }
      if (remaining === 0 || this.stopped) return 0;
    }
  }

  private untilFirstRetry(): number {
    const first = Math.min(...this.stalledUntil.values());
    return Math.max(1, Math.ceil(first - performance.now()));
  }

  private moveOne(stream: LogStream): void {
    try {
      stream.move(ROUND_BUDGET);
    } catch (err) {
      log("error", "log stream stalled", { fifo: stream.fifoPath, error: errorText(err), retryMs: STALL_RETRY_MS });
      this.stalledUntil.set(stream, performance.now() + STALL_RETRY_MS);
      this.dirty = true;
    }
  }

  /** Rebuilds the poll set when streams came, went, stalled or recovered. */
  private refresh(): void {
    const now = performance.now();
    for (const [stream, until] of this.stalledUntil) {
      if (until <= now) {
        this.stalledUntil.delete(stream);
        this.dirty = true;
      }
    }
    if (!this.dirty) return;
    this.polled = [...this.streams].filter((stream) => !this.stalledUntil.has(stream));
    this.pollSet.set(this.polled.map((stream) => stream.fd));
    this.dirty = false;
  }
}
