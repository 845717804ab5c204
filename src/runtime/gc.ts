import { collectGarbage, releaseMemory } from "@drover/runtime/gc.ts";

/**
 * A full garbage collection, asked for by a long-lived process that knows
 * when one pays off. The engine sizes its heap from what is alive, so a
 * process holding many small live objects (an agent with a thousand tasks)
 * lets garbage pile up to about as much again before it collects; a
 * collection on a timer keeps its memory near what is alive.
 */

/** Collects now, synchronously, where the runtime offers it; a no-op elsewhere. */
export type CollectGarbage = () => void;

/**
 * Gives memory the engine holds but no longer uses back to the system, where
 * the runtime offers it; a no-op elsewhere. Costlier than a collection (the
 * engine may also drop compiled code, compiled again when next run), so it is
 * for after a burst of work has left the heap much larger than what lives.
 */
export type ReleaseMemory = () => void;

export { collectGarbage, releaseMemory };

/**
 * One full collection once a burst of work has settled, for a helper that
 * idles between bursts (an executor launching its tasks, the log pump
 * registering hundreds at once). Such a process allocates too little at rest
 * to trigger a collection of its own, so the garbage of its last burst stays
 * in its heap, and in the allocator's pages under it, for as long as it lives:
 * in every executor and in the log pump, while the agent's collections
 * (HEAP_COLLECT_INTERVAL_MS) reach only the agent.
 *
 *   touch() ─► (touch() again restarts the wait) ─► quietMs without one ─► collect
 */
export class SettledCollector {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly quietMs: number,
    private readonly collect: CollectGarbage = collectGarbage,
  ) {}

  /** Work happened: collect once none has for quietMs. */
  touch(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.collect();
    }, this.quietMs);
    // A pending collection must not keep a process that is done alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Drops a pending collection (the process is leaving). */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
