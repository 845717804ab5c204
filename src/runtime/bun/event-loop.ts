/**
 * runtime/event-loop.ts on Bun. Bun's event loop waits on an epoll
 * descriptor, which polls readable while its loop has work (a socket's data,
 * a signal, a wake-up from another thread); the wait includes it and ends as
 * soon as the loop has something to do.
 *
 * Where the loop's fd cannot be found, or keeps polling readable with nothing
 * for us (LOOP_FD_SPIN_LIMIT wake-ups in a row that did not wait), the waiter
 * drops it and says so: `yieldsToLoop` turns false and callers keep waits short.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { PollFds, type NewReadinessWaiter, type ReadinessWaiter } from "../contract/event-loop.ts";
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
  private readonly pollFds = new PollFds();
  private loopFds: number[] | null = null;
  private watched = 0;
  private spins = 0;
  loopBusy = false;

  constructor(private readonly warn: (message: string, fields: Record<string, unknown>) => void) {}

  get yieldsToLoop(): boolean {
    return this.loops().length > 0;
  }

  private loops(): number[] {
    this.loopFds ??= eventLoopPollFds();
    return this.loopFds;
  }

  set(fds: readonly number[]): void {
    this.watched = fds.length;
    this.pollFds.set([...fds, ...this.loops()]);
  }

  wait(timeoutMs: number): number {
    const started = performance.now();
    const result = poll(this.pollFds.words, this.pollFds.count, timeoutMs);
    if (result < 0) return -1;
    const ready = this.pollFds.readyAmong(this.watched);
    this.loopBusy = result > ready;
    if (this.loopBusy) this.noteLoopWake(performance.now() - started);
    return ready;
  }

  revents(index: number): number {
    return this.pollFds.revents(index);
  }

  /** Nothing to do: a wait blocks the only thread that could call this. */
  wake(): void {}

  /** A loop fd that wakes us without any wait, over and over, is not Bun's idle loop: stop watching it. */
  private noteLoopWake(waitedMs: number): void {
    this.spins = waitedMs < 1 ? this.spins + 1 : 0;
    if (this.spins < LOOP_FD_SPIN_LIMIT) return;
    this.warn("event loop fd keeps polling readable; falling back to short poll timeouts", { fds: this.loopFds });
    this.loopFds = [];
    this.loopBusy = false;
  }
}

export const newReadinessWaiter: NewReadinessWaiter = (warn) => new BunWaiter(warn);
