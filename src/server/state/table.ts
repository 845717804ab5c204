/**
 * One table's pending changes inside a write: reads see the change over the
 * committed rows; nothing touches the committed table until the transaction
 * has landed in SQLite. Every key a write touches is taken from the
 * committed table (a finished group comes back to memory, tiered.ts), so a
 * write sees whole groups; scans see what is in memory (values, filter) or,
 * where a finished job matters too, everything (allValues).
 */
import type { TieredTable } from "./tiered.ts";

export class TableTxn<K, V extends object> {
  /** key -> new value, or null for a delete. */
  readonly changed = new Map<K, V | null>();

  constructor(private readonly committed: TieredTable<K, V>) {}

  get(key: K): V | undefined {
    return this.changed.has(key) ? (this.changed.get(key) ?? undefined) : this.committed.take(key);
  }

  put(key: K, value: V): void {
    this.committed.take(key);
    this.changed.set(key, value);
  }

  delete(key: K): void {
    this.committed.take(key);
    this.changed.set(key, null);
  }

  /** The objects in memory, with this write's changes: every live one (see tiered.ts). */
  *values(): IterableIterator<V> {
    for (const [key, value] of this.committed.hotEntries()) if (!this.changed.has(key)) yield value;
    for (const value of this.changed.values()) if (value !== null) yield value;
  }

  /** Every object, finished groups' from SQLite too, with this write's changes. */
  *allValues(): IterableIterator<V> {
    for (const [key, value] of this.committed.entries()) if (!this.changed.has(key)) yield value;
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

  applyTo(target: TieredTable<K, V>): void {
    for (const [key, value] of this.changed) {
      if (value === null) target.delete(key);
      else target.set(key, value);
    }
  }
}
