/**
 * One table of the server's state, in two tiers: live objects in memory,
 * finished ones (a dead job's whole group: the job, its versions, allocs and
 * evaluations) only in SQLite, where every committed object already is.
 * Readers see one table either way:
 *
 *   get(key)        memory, else the stored row (parsed, frozen, not kept)
 *   values(), ...   every object in storage order, memory's where it has one
 *                   (only memory's when nothing is cold, which is the common case)
 *   listed(...)     a list's elements: memory's objects as the list makes them,
 *                   the rest from small stored rows (list stubs, IDs), never
 *                   whole stored objects
 *   hotValues()     memory only: what the scheduler, the drainer and the GC scan
 *                   (a finished group holds no resources and wants nothing)
 *   take(key)       for writers: a cold object's whole group comes back to memory
 *                   first, so the write and its scans see all of it
 *
 * Which rows are cold is not listed anywhere: "stored but not in memory" is
 * cold, so a cold object costs the heap nothing.
 */

/**
 * Committed objects are shared with every reader (the routes, the in-process
 * client); freezing them turns an accidental write by a reader into an
 * error at the spot instead of a silent change to the server's state.
 */
export function deepFreeze<T extends object>(value: T): T {
  if (Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) if (typeof child === "object" && child !== null) deepFreeze(child);
  return value;
}

/** Where a table's cold rows are read from (the state DB). */
export interface ColdRows<K, V> {
  /** The stored object under `key`, or undefined. */
  load(key: K): V | undefined;
  /** Whether a row is stored under `key`, without parsing it. */
  has(key: K): boolean;
  /** Every stored key with a reader of its object, in storage order. */
  scan(): Iterable<[K, () => V]>;
  /** The same for one job's (group's) rows. */
  scanGroup(group: string): Iterable<[K, () => V]>;
  /** The job (group) a stored object belongs to. */
  groupOf(value: V): string;
}

export class TieredTable<K, V extends object> {
  private readonly hot = new Map<K, V>();
  /** Stored objects not in memory; 0 keeps every read in memory. */
  private coldCount = 0;

  /** Brings the group of a cold object back to memory (the store's thaw). */
  private thaw: ((group: string) => void) | undefined;

  constructor(private readonly cold?: ColdRows<K, V>) {}

  thawWith(thaw: (group: string) => void): void {
    this.thaw = thaw;
  }

  get size(): number {
    return this.hot.size + this.coldCount;
  }

  /** How many objects only SQLite holds (for tests and the agent's metrics). */
  get coldSize(): number {
    return this.coldCount;
  }

  get hotSize(): number {
    return this.hot.size;
  }

  get(key: K): V | undefined {
    const value = this.hot.get(key);
    if (value !== undefined || this.coldCount === 0 || !this.cold) return value;
    const stored = this.cold.load(key);
    return stored === undefined ? undefined : deepFreeze(stored);
  }

  has(key: K): boolean {
    if (this.hot.has(key)) return true;
    return this.coldCount > 0 && this.cold !== undefined && this.cold.has(key);
  }

  /** For a write: like get, but a cold object's group is brought back to memory first. */
  take(key: K): V | undefined {
    const value = this.hot.get(key);
    if (value !== undefined || this.coldCount === 0 || !this.cold || !this.thaw) return value;
    const stored = this.cold.load(key);
    if (stored === undefined) return undefined;
    this.thaw(this.cold.groupOf(stored));
    return this.hot.get(key);
  }

  /**
   * One job's objects (its group), without reading the rest of the table:
   * what `job status` and the job's allocations and evaluations read.
   */
  ofGroup(group: string): V[] {
    if (!this.cold) throw new Error("ofGroup needs a table with finished groups");
    const out: V[] = [];
    for (const value of this.hot.values()) if (this.cold.groupOf(value) === group) out.push(value);
    if (this.coldCount === 0) return out;
    for (const [key, load] of this.cold.scanGroup(group)) if (!this.hot.has(key)) out.push(deepFreeze(load()));
    return out;
  }

  /**
   * A list's elements, in no order: each object in memory as `ofHot` makes
   * it, each one only stored from `stored` (the table's small rows for the
   * list, read only when something is cold).
   */
  *listed<L>(ofHot: (value: V) => L, stored: () => Iterable<[K, () => L]>): IterableIterator<L> {
    for (const value of this.hot.values()) yield ofHot(value);
    if (this.coldCount === 0) return;
    for (const [key, item] of stored()) if (!this.hot.has(key)) yield item();
  }

  /** The object in memory under `key`, if any. */
  hotGet(key: K): V | undefined {
    return this.hot.get(key);
  }

  /** Memory only (see the header). */
  hotValues(): IterableIterator<V> {
    return this.hot.values();
  }

  hotEntries(): IterableIterator<[K, V]> {
    return this.hot.entries();
  }

  *entries(): IterableIterator<[K, V]> {
    if (this.coldCount === 0 || !this.cold) {
      yield* this.hot.entries();
      return;
    }
    for (const [key, load] of this.cold.scan()) yield [key, this.hot.get(key) ?? deepFreeze(load())];
  }

  *keys(): IterableIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }

  /** A committed write (already in SQLite). */
  set(key: K, value: V): void {
    this.hot.set(key, value);
  }

  /** A committed delete (already gone from SQLite); writers take() first, so the key is in memory. */
  delete(key: K): void {
    this.hot.delete(key);
  }

  /** Drops a committed object from memory: it stays in SQLite. */
  freeze(key: K): void {
    if (this.hot.delete(key)) this.coldCount++;
  }

  /** Puts a stored object back in memory. */
  warm(key: K, value: V): void {
    if (this.hot.has(key)) return;
    this.hot.set(key, value);
    this.coldCount--;
  }

  /** Sets the count of stored rows not in memory (after loading). */
  countCold(storedRows: number): void {
    this.coldCount = storedRows - this.hot.size;
  }
}
