/**
 * Listeners (or waiters) in a plain array made with the first one: what an
 * alloc's objects keep while it runs. A JavaScriptCore Set costs about 250
 * bytes however few entries it holds (its hash table), and a running alloc
 * kept four (its state waiters and task state listeners, its update
 * watchers, its checks' listeners), mostly with none or one entry (issue 35:
 * the agent's memory per task). An array of one costs about 50 bytes, and a
 * linear search over a handful is as fast as hashing.
 */
export class ListenerList<T> {
  private items: T[] | undefined;

  /** Adds `item` (once, as a Set would); returns what removes it. */
  add(item: T): () => void {
    const items = (this.items ??= []);
    if (!items.includes(item)) items.push(item);
    return () => this.delete(item);
  }

  delete(item: T): void {
    const items = this.items;
    const at = items ? items.indexOf(item) : -1;
    if (at >= 0) items!.splice(at, 1);
  }

  /** Calls `each` on the items as they are now: one added or removed by a call is neither called nor skipped. */
  forEach(each: (item: T) => void): void {
    if (!this.items || this.items.length === 0) return;
    for (const item of this.items.slice()) each(item);
  }
}
