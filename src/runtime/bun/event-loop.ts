/**
 * runtime/event-loop.ts on Bun. Bun's event loop waits on an epoll
 * descriptor, which polls readable while its loop has work (a socket's data,
 * a signal, a wake-up from another thread); the waiter's own epoll set holds
 * it, so a wait ends as soon as the loop has something to do.
 *
 * Where the loop's fd cannot be found, or keeps polling readable with nothing
 * for us (LOOP_FD_SPIN_LIMIT wake-ups in a row that did not wait), the waiter
 * drops it and says so: `yieldsToLoop` turns false and callers keep waits short.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { EPOLL_MAX_EVENTS, EpollFds, type NewReadinessWaiter, type ReadinessWaiter } from "../contract/event-loop.ts";
import { epollWait } from "../libc.ts";
import { poll } from "../libc.ts";

/** Immediate wake-ups by the event loop's fd in a row after which it is taken for stuck and dropped. */
const LOOP_FD_SPIN_LIMIT = 1_000;

/** The epoll descriptors of this process; empty where none can be seen. */
function eventLoopPollFds(): number[] {
  const fds: number[] = [];
  for (const name of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${name}`) === "anon_inode:[eventpoll]") fds.push(Number(name));
    } catch {
      // Closed while we looked (the listing's own fd, for one).
    }
  }
  return fds;
}

class BunWaiter implements ReadinessWaiter {
  private readonly epoll = new EpollFds();
  private loopFds: number[] | null = null;
  private spins = 0;
  loopBusy = false;

  constructor(private readonly warn: (message: string, fields: Record<string, unknown>) => void) {}

  get yieldsToLoop(): boolean {
    return this.loops().length > 0;
  }

  get ready(): readonly number[] {
    return this.epoll.ready;
  }

  private loops(): number[] {
    if (this.loopFds === null) {
      this.loopFds = eventLoopPollFds().filter((fd) => !EpollFds.ours.has(fd));
      for (const fd of this.loopFds) this.epoll.watchOwn(fd);
    }
    return this.loopFds;
  }

  watch(fd: number): void {
    this.loops();
    this.epoll.watch(fd);
  }

  unwatch(fd: number): void {
    this.epoll.unwatch(fd);
  }

  wait(timeoutMs: number): number {
    this.loops();
    const started = performance.now();
    const count = epollWait(this.epoll.fd, this.epoll.events, EPOLL_MAX_EVENTS, timeoutMs);
    if (count < 0) return -1;
    const ready = this.epoll.collect(count);
    this.loopBusy = this.epoll.ownReady;
    if (this.loopBusy) this.noteLoopWake(performance.now() - started);
    return ready;
  }

  /** Nothing to do: a wait blocks the only thread that could call this. */
  wake(): void {}

  /** A loop fd that wakes us without any wait, over and over, is not Bun's idle loop: stop watching it. */
  private noteLoopWake(waitedMs: number): void {
    this.spins = waitedMs < 1 ? this.spins + 1 : 0;
    if (this.spins < LOOP_FD_SPIN_LIMIT) return;
    this.warn("event loop fd keeps polling readable; falling back to short poll timeouts", { fds: this.loopFds });
    for (const fd of this.loopFds ?? []) this.epoll.unwatchOwn(fd);
    this.loopFds = [];
    this.loopBusy = false;
  }
}

export const newReadinessWaiter: NewReadinessWaiter = (warn) => new BunWaiter(warn);
