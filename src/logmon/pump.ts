/**
 * The loop that moves every registered stream's bytes, on the JS thread.
 * Bun has no readiness callback for arbitrary fds, so a tick blocks in
 * poll(2) over all FIFOs plus the event loop's own epoll fd, which polls
 * readable the moment an RPC arrives (or a signal, or any other event):
 *
 *   tick ─► poll(FIFOs + event loop fd)
 *     ├─ FIFOs ready ─► each moves ≤ ROUND_BUDGET (a flooding task cannot starve
 *     │                 the others) ─► poll again, until the tick has run TICK_MS
 *     ├─ event loop ready ─► end the tick at once (the RPC is answered now)
 *     └─ nothing for IDLE_WAIT_MS ─► end the tick
 *   ─► setImmediate(tick)                         no streams: stop until add()
 *
 * Where the event loop's fd cannot be found, or keeps polling readable with
 * nothing for us (LOOP_FD_SPIN_LIMIT wake-ups in a row that did not wait), a
 * tick waits at most TICK_MS instead: RPC answers then take up to that long.
 *
 * A stream whose move fails (disk full, a log file replaced) sits out for
 * STALL_RETRY_MS; its bytes wait in its pipe and the task blocks when that is
 * full, which loses nothing.
 */
import { eventLoopPollFds } from "../runtime/event-loop.ts";
import { PollSet } from "../runtime/libc.ts";
import { errorText, log } from "./log.ts";
import type { LogStream } from "./log-stream.ts";

/**
 * Longest a busy tick keeps the JS thread: with the event loop's fd watched,
 * an RPC ends a tick early anyway; without it, this bounds RPC latency.
 */
export const TICK_MS = 20;

/** Longest an idle tick sleeps when the event loop's fd wakes it: one wake-up a second at rest. */
export const IDLE_WAIT_MS = 1_000;

/** Bytes one stream may move per poll round: one full 1 MiB pipe, then the next stream's turn. */
export const ROUND_BUDGET = 1 << 20;

/** How long a stream whose writes failed waits before it is tried again. */
export const STALL_RETRY_MS = 1_000;

/** Immediate wake-ups by the event loop's fd in a row after which it is taken for stuck and dropped. */
const LOOP_FD_SPIN_LIMIT = 1_000;

export class Pump {
  private readonly streams = new Set<LogStream>();
  private readonly stalledUntil = new Map<LogStream, number>();
  private readonly pollSet = new PollSet();
  private polled: LogStream[] = [];
  private loopFds: number[] = [];
  private loopFdsFound = false;
  private loopSpins = 0;
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
    const started = performance.now();
    let moved = false;
    for (;;) {
      this.refresh();
      if (this.polled.length === 0) return this.untilFirstRetry();
      const elapsed = performance.now() - started;
      if (moved && elapsed >= TICK_MS) return 0;
      const timeout = moved ? Math.ceil(TICK_MS - elapsed) : this.idleTimeout();
      const waitStarted = performance.now();
      const ready = this.pollSet.wait(timeout);
      if (ready <= 0) return 0;
      this.polled.forEach((stream, i) => {
        if (this.pollSet.revents(i) !== 0) {
          this.moveOne(stream);
          moved = true;
        }
      });
      if (this.loopReady()) {
        this.noteLoopWake(performance.now() - waitStarted);
        return 0;
      }
    }
  }

  private idleTimeout(): number {
    const limit = this.loopFds.length > 0 ? IDLE_WAIT_MS : TICK_MS;
    return this.stalledUntil.size > 0 ? Math.min(limit, this.untilFirstRetry()) : limit;
  }

  private loopReady(): boolean {
    for (let i = 0; i < this.loopFds.length; i++) if (this.pollSet.revents(this.polled.length + i) !== 0) return true;
    return false;
  }

  /** A loop fd that wakes us without any wait, over and over, is not Bun's idle loop: stop watching it. */
  private noteLoopWake(waitedMs: number): void {
    this.loopSpins = waitedMs < 1 ? this.loopSpins + 1 : 0;
    if (this.loopSpins < LOOP_FD_SPIN_LIMIT) return;
    log("warn", "event loop fd keeps polling readable; falling back to short poll timeouts", { fds: this.loopFds, tickMs: TICK_MS });
    this.loopFds = [];
    this.dirty = true;
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

  private untilFirstRetry(): number {
    const first = Math.min(...this.stalledUntil.values());
    return Math.max(1, Math.ceil(first - performance.now()));
  }

  /** Rebuilds the poll set when streams came, went, stalled or recovered. */
  private refresh(): void {
    if (!this.loopFdsFound) {
      this.loopFds = eventLoopPollFds();
      this.loopFdsFound = true;
    }
    const now = performance.now();
    for (const [stream, until] of this.stalledUntil) {
      if (until <= now) {
        this.stalledUntil.delete(stream);
        this.dirty = true;
      }
    }
    if (!this.dirty) return;
    this.polled = [...this.streams].filter((stream) => !this.stalledUntil.has(stream));
    this.pollSet.set([...this.polled.map((stream) => stream.fd), ...this.loopFds]);
    this.dirty = false;
  }
}
