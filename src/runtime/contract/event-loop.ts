/**
 * Waiting until one of many descriptors is readable, for the log pump, without
 * keeping the event loop from answering sockets meanwhile. Neither runtime
 * has a readiness callback for an arbitrary fd, so each half polls:
 *
 *   Bun   (bun/event-loop.ts)   poll(2) on the JS thread, over the fds plus the
 *                               event loop's own epoll descriptor, which polls
 *                               readable the moment the loop has work: the wait
 *                               ends and reports `loopBusy`, and the caller yields
 *   Deno  (deno/event-loop.ts)  poll(2) on one of Deno's blocking threads,
 *                               awaited, so the JS thread stays free; a pipe
 *                               ends the wait early when the set changes
 */
import { POLLIN } from "../libc.ts";

/** A pollfd array (struct pollfd: int fd; short events; short revents), rebuilt only when the set changes. */
export class PollFds {
  words = new Int32Array(2);
  private halves = new Int16Array(this.words.buffer);
  count = 0;

  set(fds: readonly number[]): void {
    if (this.words.length < fds.length * 2) {
      this.words = new Int32Array(fds.length * 2);
      this.halves = new Int16Array(this.words.buffer);
    }
    fds.forEach((fd, i) => {
      this.words[i * 2] = fd;
      this.halves[i * 4 + 2] = POLLIN;
      this.halves[i * 4 + 3] = 0;
    });
    this.count = fds.length;
  }

  revents(index: number): number {
    return this.halves[index * 4 + 3]!;
  }

  /** How many of the first `count` fds the last poll found ready (the rest are the waiter's own). */
  readyAmong(count: number): number {
    let ready = 0;
    for (let i = 0; i < count; i++) if (this.revents(i) !== 0) ready++;
    return ready;
  }
}

export interface ReadinessWaiter {
  /**
   * True when a wait ends as soon as the event loop has work, so a long wait
   * costs no latency elsewhere; false when it cannot see the loop (then keep
   * waits short).
   */
  readonly yieldsToLoop: boolean;
  /** True when the last wait ended because the event loop has work: yield to it before waiting again. */
  readonly loopBusy: boolean;
  /** Replaces the watched fds (all for POLLIN); between waits only. */
  set(fds: readonly number[]): void;
  /** Waits up to `timeoutMs`; the number of watched fds that are ready (0: none), or -1 on error. */
  wait(timeoutMs: number): number | Promise<number>;
  /** The revents of the `index`th watched fd after the last wait. */
  revents(index: number): number;
  /** Ends a wait in progress early (the set changed, or the caller stops). */
  wake(): void;
}

/** `warn` hears when the waiter falls back to short waits, with what it saw. */
export type NewReadinessWaiter = (warn: (message: string, fields: Record<string, unknown>) => void) => ReadinessWaiter;

