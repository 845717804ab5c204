/**
 * runtime/event-loop.ts on Deno: epoll_wait(2) declared `nonblocking`, so Deno
 * runs it on one of its blocking threads and the JS thread awaits it, free to
 * answer sockets meanwhile. A pipe in the set lets wake() end a wait early.
 */
import { EPOLL_MAX_EVENTS, EpollFds, type NewReadinessWaiter, type ReadinessWaiter } from "../contract/event-loop.ts";
import { O_CLOEXEC_FLAG, O_NONBLOCK_FLAG, pipe2, sysRead, sysWrite } from "../libc.ts";
import { blockingCalls } from "./blocking-calls.ts";

class DenoWaiter implements ReadinessWaiter {
  readonly yieldsToLoop = true;
  readonly loopBusy = false;
  private readonly epoll = new EpollFds();
  private readonly wakeFds = pipe2(O_NONBLOCK_FLAG | O_CLOEXEC_FLAG);

  constructor() {
    this.epoll.watchOwn(this.wakeFds[0]);
  }

  get ready(): readonly number[] {
    return this.epoll.ready;
  }

  watch(fd: number): void {
    this.epoll.watch(fd);
  }

  unwatch(fd: number): void {
    this.epoll.unwatch(fd);
  }

  async wait(timeoutMs: number): Promise<number> {
    const count = await blockingCalls().epoll_wait(this.epoll.fd, this.epoll.events, EPOLL_MAX_EVENTS, timeoutMs);
    if (count < 0) return -1;
    const ready = this.epoll.collect(count);
    if (this.epoll.ownReady) this.drainWakes();
    return ready;
  }

  wake(): void {
    try {
      sysWrite(this.wakeFds[1], "!");
    } catch {
      // The pipe is full: a wake-up is pending already.
    }
  }

  private drainWakes(): void {
    const scratch = new Uint8Array(64);
    try {
      while (sysRead(this.wakeFds[0], scratch) > 0);
    } catch {
      // EAGAIN: drained.
    }
  }
}

export const newReadinessWaiter: NewReadinessWaiter = () => new DenoWaiter();
