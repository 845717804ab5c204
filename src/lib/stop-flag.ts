/**
 * A one-way "stopping" flag that can be watched: what an alloc's hooks are
 * given to give up their waits when the alloc is stopped. A plain object in
 * place of an AbortController, which costs ~0.7 KiB, ~1.1 KiB once listened
 * to, most of it outside the JavaScript heap; every alloc whose health is
 * watched (a service job's, in a deployment) listened to one (issue 35: the
 * agent's memory per task).
 */
import { ListenerList } from "./listener-list.ts";

/** What a watcher sees of a StopFlag. */
export interface StopSignal {
  readonly stopped: boolean;
  /** Calls `listener` once the stop comes (check `stopped` first: one that came already is not replayed); returns what unsubscribes it. */
  onStop(listener: () => void): () => void;
}

export class StopFlag implements StopSignal {
  private done = false;
  private readonly listeners = new ListenerList<() => void>();

  get stopped(): boolean {
    return this.done;
  }

  onStop(listener: () => void): () => void {
    // After the stop, nothing would call it: it is not kept.
    if (this.done) return () => {};
    return this.listeners.add(listener);
  }

  /** Stops, once: each listener is called, then let go. */
  stop(): void {
    if (this.done) return;
    this.done = true;
    this.listeners.forEach((listener) => {
      this.listeners.delete(listener);
      listener();
    });
  }
}
