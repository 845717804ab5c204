/**
 * One table's pending changes inside a write: reads see the change over the
 * committed rows; nothing touches the committed map until the transaction
 * has landed in SQLite.
 */
export class TableTxn<K, V> {
  /** key -> new value, or null for a delete. */
  readonly changed = new Map<K, V | null>();

  constructor(private readonly committed: ReadonlyMap<K, V>) {}

  get(key: K): V | undefined {
    return this.changed.has(key) ? (this.changed.get(key) ?? undefined) : this.committed.get(key);
  }

  put(key: K, value: V): void {
    this.changed.set(key, value);
  }

  delete(key: K): void {
    this.changed.set(key, null);
  }

  *values(): IterableIterator<V> {
    for (const [key, value] of this.committed) if (!this.changed.has(key)) yield value;
    for (const value of this.changed.values()) if (value !== null) yield value;
  }

  filter(predicate: (value: V) => boolean): V[] {
    const out: V[] = [];
    for (const value of this.values()) if (predicate(value)) out.push(value);
    return out;
  }

  get isChanged(): boolean {
    return this.changed.size > 0;
  }

  applyTo(target: Map<K, V>): void {
    for (const [key, value] of this.changed) {
      if (value === null) target.delete(key);
      else target.set(key, value);
    }
  }
}
