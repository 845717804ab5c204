/**
 * runtime/event-loop.ts on Deno: poll(2) declared `nonblocking`, so Deno runs
 * it on one of its blocking threads and the JS thread awaits it, free to
 * answer sockets meanwhile. A pipe in the set lets wake() end a wait early.
 */
import { PollFds, type NewReadinessWaiter, type ReadinessWaiter } from "../contract/event-loop.ts";
import { O_CLOEXEC_FLAG, O_NONBLOCK_FLAG, pipe2, sysRead, sysWrite } from "../libc.ts";
import { blockingCalls } from "./blocking-calls.ts";

class DenoWaiter implements ReadinessWaiter {
  readonly yieldsToLoop = true;
  readonly loopBusy = false;
  private readonly pollFds = new PollFds();
  private readonly wakeFds = pipe2(O_NONBLOCK_FLAG | O_CLOEXEC_FLAG);
  private watched = 0;

  set(fds: readonly number[]): void {
    this.watched = fds.length;
    this.pollFds.set([...fds, this.wakeFds[0]]);
  }

  async wait(timeoutMs: number): Promise<number> {
    if (this.pollFds.count === 0) this.set([]);
    const result = await blockingCalls().poll(this.pollFds.words, this.pollFds.count, timeoutMs);
    if (result < 0) return -1;
    if (this.pollFds.revents(this.watched) !== 0) this.drainWakes();
    return this.pollFds.readyAmong(this.watched);
  }

  revents(index: number): number {
    return this.pollFds.revents(index);
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
