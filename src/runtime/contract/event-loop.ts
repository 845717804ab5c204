/**
 * Waiting until one of many descriptors is readable, for the log pump, without
 * keeping the event loop from answering sockets meanwhile. Neither runtime
 * has a readiness callback for an arbitrary fd, so each half waits on an
 * epoll set of its own:
 *
 *   Bun   (bun/event-loop.ts)   epoll_wait(2) on the JS thread, the set holding
 *                               the fds plus the event loop's own epoll
 *                               descriptor, which polls readable the moment the
 *                               loop has work: the wait ends and reports
 *                               `loopBusy`, and the caller yields
 *   Deno  (deno/event-loop.ts)  epoll_wait(2) on one of Deno's blocking threads,
 *                               awaited, so the JS thread stays free; a pipe in
 *                               the set ends the wait early
 *
 * An epoll set, not poll(2): a wait costs per ready descriptor, not per
 * watched one. With a thousand tasks (two thousand FIFOs) every wait of
 * poll(2) walked them all, and during a start every RPC ends a wait: the
 * pump's poll calls were 65 % of its kernel time.
 */
import { EPOLL_EVENT_BYTES, EPOLL_EVENT_DATA_OFFSET, epollAdd, epollCreate, epollDel, errno } from "../libc.ts";

/** Events read per wait; more ready fds wait for the next (a level-triggered set reports them again, the others first). */
export const EPOLL_MAX_EVENTS = 1024;

const EEXIST = 17;

/** An epoll set of the caller's fds and the waiter's own (the event loop's, a wake pipe), with the last wait's events. */
export class EpollFds {
  /** Every waiter's set in this process, so none takes another's for the event loop's. */
  static readonly ours = new Set<number>();
  readonly fd = epollCreate();
  readonly events = new Uint8Array(EPOLL_EVENT_BYTES * EPOLL_MAX_EVENTS);
  private readonly view = new DataView(this.events.buffer);
  private readonly own = new Set<number>();
  /** The caller's fds found ready by the last wait. */
  readonly ready: number[] = [];
  /** Whether one of the waiter's own fds was ready in the last wait. */
  ownReady = false;

  constructor() {
    EpollFds.ours.add(this.fd);
  }

  watch(fd: number): void {
    if (epollAdd(this.fd, fd) !== 0 && errno() !== EEXIST) throw new Error(`epoll_ctl ADD fd ${fd}: errno ${errno()}`);
  }

  /** Before the fd is closed: a number closed and reused by another fd would otherwise stay in the set under its old file. */
  unwatch(fd: number): void {
    // ENOENT or EBADF: not in the set (never added, or closed already), which is what was asked.
    epollDel(this.fd, fd);
  }

  watchOwn(fd: number): void {
    this.own.add(fd);
    this.watch(fd);
  }

  unwatchOwn(fd: number): void {
    this.own.delete(fd);
    this.unwatch(fd);
  }

  /** Sorts the `count` events a wait returned into `ready` and `ownReady`; returns how many of the caller's are ready. */
  collect(count: number): number {
    this.ready.length = 0;
    this.ownReady = false;
    for (let i = 0; i < count; i++) {
      const fd = this.view.getInt32(i * EPOLL_EVENT_BYTES + EPOLL_EVENT_DATA_OFFSET, true);
      if (this.own.has(fd)) this.ownReady = true;
      else this.ready.push(fd);
    }
    return this.ready.length;
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
  /** Starts watching `fd` for input. */
  watch(fd: number): void;
  /** Stops watching `fd`; call it before closing the fd. */
  unwatch(fd: number): void;
  /** Waits up to `timeoutMs`; the number of watched fds that are ready (0: none), or -1 on error. */
  wait(timeoutMs: number): number | Promise<number>;
  /** The watched fds the last wait found ready. */
  readonly ready: readonly number[];
  /** Ends a wait in progress early (the caller stops). */
  wake(): void;
}

/** `warn` hears when the waiter falls back to short waits, with what it saw. */
export type NewReadinessWaiter = (warn: (message: string, fields: Record<string, unknown>) => void) => ReadinessWaiter;
