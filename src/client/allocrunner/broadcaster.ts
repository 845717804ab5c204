/**
 * Fans an alloc's updates out to watchers. Each watcher holds at most one
 * unread update, the newest: a slow watcher skips versions rather than
 * queueing them, and an update older than one already sent is dropped (the
 * server's AllocModifyIndex only grows).
 *
 *   send(v3) ─┬─> watcher A: next() -> v3
 *             └─> watcher B (busy): holds v3 ─ send(v4) ─> holds v4 ─> next() -> v4
 *   send(v2) after v3: dropped
 */
import { ListenerList } from "../../lib/listener-list.ts";

export interface Versioned {
  AllocModifyIndex: number;
}

export class AllocWatcher<T> {
  private unread: T | undefined;
  private waiting: ((value: T | undefined) => void) | undefined;
  private closed = false;

  constructor(private readonly onClose: (watcher: AllocWatcher<T>) => void) {}

  /** The next update; undefined once the broadcaster or this watcher is closed. */
  next(): Promise<T | undefined> {
    if (this.unread !== undefined) {
      const value = this.unread;
      this.unread = undefined;
      return Promise.resolve(value);
    }
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
    this.waiting?.(undefined);
    this.waiting = undefined;
  }

  /** @internal the broadcaster's side */
  deliver(value: T): void {
    if (this.closed) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve(value);
    } else {
      this.unread = value;
    }
  }
}

export class AllocBroadcaster<T extends Versioned> {
  private readonly watchers = new ListenerList<AllocWatcher<T>>();
  private lastIndex = -1;
  private closed = false;

  /** Sends `alloc` to every watcher; false when it is stale or the broadcaster is closed. */
  send(alloc: T): boolean {
    if (this.closed || alloc.AllocModifyIndex < this.lastIndex) return false;
    this.lastIndex = alloc.AllocModifyIndex;
    this.watchers.forEach((watcher) => watcher.deliver(alloc));
    return true;
  }

  watch(): AllocWatcher<T> {
    const watcher = new AllocWatcher<T>((w) => this.watchers.delete(w));
    if (this.closed) watcher.close();
    else this.watchers.add(watcher);
    return watcher;
  }

  close(): void {
    this.closed = true;
    this.watchers.forEach((watcher) => watcher.close());
  }
}
