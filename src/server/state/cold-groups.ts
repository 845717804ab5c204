/**
 * The finished jobs whose groups only SQLite holds, with what the GC and the
 * lists need of each (freezer.ts's ColdGroup), kept in columns rather than as
 * one object per job.
 *
 * Why columns: a job finishes in the middle of the work that ran it, so an
 * object kept for it lands in a heap block among that work's garbage. The
 * JavaScript heap does not move objects, so each such survivor keeps its whole
 * block (16 KiB) from being given back: after a burst of short jobs the agent
 * kept about one block per finished job (measured: docs/performance.md, "A
 * stream of short jobs"). Numbers in typed arrays and a few shared strings
 * (namespaces and parents repeat) leave one small cell per job, its ID.
 *
 * Reads make a ColdGroup object each time (short-lived); order is the order
 * jobs were frozen in, like the Map this replaces.
 */
import type { ColdGroup } from "./freezer.ts";

/** Slots the columns start with; they double when full. */
const INITIAL_SLOTS = 64;
const BATCH = 1;
const SCALED = 2;

/** What readers (lists, searches) see: the groups, and their cheapest parts without making a ColdGroup each. */
export interface ColdGroupsView extends ReadonlyMap<string, Readonly<ColdGroup>> {
  /** Each job as lists and searches name it: its ID and namespace. */
  listed(): MapIterator<{ ID: string; Namespace: string }>;
  /** Each job's parent ID ("" for none). */
  parentIds(): MapIterator<string>;
  /** A job's kept list stub text. */
  listStub(jobId: string): string | undefined;
}

export class ColdGroups implements ColdGroupsView {
  /** Job ID to its slot in the columns. */
  private readonly slots = new Map<string, number>();
  /** Slots given back by deleted jobs, reused first. */
  private readonly freeSlots: number[] = [];
  private last = new Float64Array(INITIAL_SLOTS);
  /** NaN where the group has nothing removable before the job itself. */
  private oldestRemovable = new Float64Array(INITIAL_SLOTS);
  private flags = new Uint8Array(INITIAL_SLOTS);
  /** Indexes into `strings`: a namespace's or parent's text is kept once. */
  private namespaceIds = new Uint32Array(INITIAL_SLOTS);
  private parentIdIds = new Uint32Array(INITIAL_SLOTS);
  private readonly strings: string[] = [];
  private readonly stringIds = new Map<string, number>();
  /** List stub texts by slot, kept once a job list made them. */
  private readonly listStubs = new Map<number, string>();

  get size(): number {
    return this.slots.size;
  }

  has(jobId: string): boolean {
    return this.slots.has(jobId);
  }

  get(jobId: string): ColdGroup | undefined {
    const slot = this.slots.get(jobId);
    return slot === undefined ? undefined : this.read(slot);
  }

  set(jobId: string, group: ColdGroup): this {
    let slot = this.slots.get(jobId);
    if (slot === undefined) {
      slot = this.freeSlots.pop() ?? this.slots.size;
      if (slot >= this.last.length) this.grow();
      this.slots.set(jobId, slot);
    }
    this.last[slot] = group.last;
    this.oldestRemovable[slot] = group.oldestRemovable ?? Number.NaN;
    this.flags[slot] = (group.batch ? BATCH : 0) | (group.scaled ? SCALED : 0);
    this.namespaceIds[slot] = this.intern(group.namespace);
    this.parentIdIds[slot] = this.intern(group.parentId);
    if (group.listStub === undefined) this.listStubs.delete(slot);
    else this.listStubs.set(slot, group.listStub);
    return this;
  }

  delete(jobId: string): boolean {
    const slot = this.slots.get(jobId);
    if (slot === undefined) return false;
    this.slots.delete(jobId);
    this.listStubs.delete(slot);
    this.freeSlots.push(slot);
    return true;
  }

  listStub(jobId: string): string | undefined {
    const slot = this.slots.get(jobId);
    return slot === undefined ? undefined : this.listStubs.get(slot);
  }

  /** Keeps a job's list stub text (a cold group cannot change; a write thaws it first, which deletes it here). */
  keepListStub(jobId: string, text: string): void {
    const slot = this.slots.get(jobId);
    if (slot !== undefined) this.listStubs.set(slot, text);
  }

  entries(): MapIterator<[string, ColdGroup]> {
    return this.slots.entries().map(([jobId, slot]) => [jobId, this.read(slot)]);
  }

  keys(): MapIterator<string> {
    return this.slots.keys();
  }

  values(): MapIterator<ColdGroup> {
    return this.slots.values().map((slot) => this.read(slot));
  }

  [Symbol.iterator](): MapIterator<[string, ColdGroup]> {
    return this.entries();
  }

  listed(): MapIterator<{ ID: string; Namespace: string }> {
    return this.slots.entries().map(([jobId, slot]) => ({ ID: jobId, Namespace: this.strings[this.namespaceIds[slot]!]! }));
  }

  parentIds(): MapIterator<string> {
    return this.slots.values().map((slot) => this.strings[this.parentIdIds[slot]!]!);
  }

  forEach(fn: (group: ColdGroup, jobId: string, map: ReadonlyMap<string, ColdGroup>) => void): void {
    for (const [jobId, group] of this.entries()) fn(group, jobId, this);
  }

  private read(slot: number): ColdGroup {
    const oldest = this.oldestRemovable[slot]!;
    const flags = this.flags[slot]!;
    const group: ColdGroup = {
      last: this.last[slot]!,
      oldestRemovable: Number.isNaN(oldest) ? undefined : oldest,
      batch: (flags & BATCH) !== 0,
      namespace: this.strings[this.namespaceIds[slot]!]!,
      parentId: this.strings[this.parentIdIds[slot]!]!,
      scaled: (flags & SCALED) !== 0,
    };
    const listStub = this.listStubs.get(slot);
    if (listStub !== undefined) group.listStub = listStub;
    return group;
  }

  private intern(text: string): number {
    let id = this.stringIds.get(text);
    if (id === undefined) {
      id = this.strings.push(text) - 1;
      this.stringIds.set(text, id);
    }
    return id;
  }

  private grow(): void {
    const size = this.last.length * 2;
    const grown = <T extends Float64Array | Uint8Array | Uint32Array>(old: T, make: (n: number) => T): T => {
      const next = make(size);
      next.set(old);
      return next;
    };
    this.last = grown(this.last, (n) => new Float64Array(n));
    this.oldestRemovable = grown(this.oldestRemovable, (n) => new Float64Array(n));
    this.flags = grown(this.flags, (n) => new Uint8Array(n));
    this.namespaceIds = grown(this.namespaceIds, (n) => new Uint32Array(n));
    this.parentIdIds = grown(this.parentIdIds, (n) => new Uint32Array(n));
  }
}
