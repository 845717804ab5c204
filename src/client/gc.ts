/**
 * Garbage collection of finished allocations: their alloc dirs (logs, data)
 * stay for inspection until room is needed. The oldest-finished go first.
 *
 *   alloc becomes terminal ──> mark(id)  (queued by the time it finished)
 *   every client.gc_interval ──> while disk or inode use is above its threshold: destroy the oldest
 *   before new allocs start  ──> while live + kept + new > gc_max_allocs,
 *                                or the alloc dir's free space is below what they ask: destroy the oldest
 *   alloc removed by the server (or API GC) ──> collect(id)
 */
import { BYTES_PER_MIB } from "../lib/units.ts";

export interface GcUsage {
  diskUsedPercent: number;
  inodesUsedPercent: number;
  availableBytes: number;
}

export interface GcConfig {
  maxAllocs: number;
  diskUsageThreshold: number;
  inodeUsageThreshold: number;
}

type Destroy = () => Promise<void>;

export class AllocGarbageCollector {
  /** Insertion order is the order the allocs finished in. */
  private readonly queue = new Map<string, Destroy>();

  constructor(
    private readonly config: GcConfig,
    private readonly usage: () => GcUsage,
    private readonly onCollect: (allocId: string, reason: string) => void = () => {},
  ) {}

  /** Finished allocs waiting to be collected. */
  get size(): number {
    return this.queue.size;
  }

  mark(allocId: string, destroy: Destroy): void {
    if (!this.queue.has(allocId)) this.queue.set(allocId, destroy);
  }

  /** Forgets an alloc without destroying it (it came back to life, or was destroyed elsewhere). */
  unmark(allocId: string): void {
    this.queue.delete(allocId);
  }

  async collect(allocId: string, reason = "requested"): Promise<boolean> {
    const destroy = this.queue.get(allocId);
    if (!destroy) return false;
    this.queue.delete(allocId);
    this.onCollect(allocId, reason);
    await destroy();
    return true;
  }

  async collectAll(): Promise<number> {
    const ids = [...this.queue.keys()];
    for (const id of ids) await this.collect(id);
    return ids.length;
  }

  /** The periodic pass: brings disk and inode use under their thresholds if finished allocs allow. */
  async keepUsageBelowThreshold(): Promise<number> {
    let collected = 0;
    for (;;) {
      const usage = this.usage();
      const over =
        usage.diskUsedPercent > this.config.diskUsageThreshold || usage.inodesUsedPercent > this.config.inodeUsageThreshold;
      const oldest = this.queue.keys().next();
      if (!over || oldest.done) return collected;
      await this.collect(oldest.value, `disk ${usage.diskUsedPercent.toFixed(1)}% / inodes ${usage.inodesUsedPercent.toFixed(1)}% used`);
      collected++;
    }
  }

  /** Before starting `count` new allocs that ask for `diskMb` in all, next to `live` running ones. */
  async makeRoomFor(count: number, live: number, diskMb: number): Promise<number> {
    let collected = 0;
    for (;;) {
      const oldest = this.queue.keys().next();
      if (oldest.done) return collected;
      const tooMany = live + this.queue.size + count > this.config.maxAllocs;
      const tooLittleDisk = this.usage().availableBytes < diskMb * BYTES_PER_MIB;
      if (!tooMany && !tooLittleDisk) return collected;
      await this.collect(oldest.value, tooMany ? `more than gc_max_allocs (${this.config.maxAllocs})` : "disk space for new allocs");
      collected++;
    }
  }
}
