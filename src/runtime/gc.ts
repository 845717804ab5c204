import { collectGarbage, collectYoung, releaseMemory } from "@drover/runtime/gc.ts";

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

export { collectGarbage, collectYoung, releaseMemory };

/**
 * A collection some time after work, on a timer that must not keep a
 * finished process alive. The two kinds below differ only in what a touch
 * does while one is pending: a burst's keeps the collection already timed,
 * a settled one's waits again.
 */
abstract class DeferredCollector {
  private timer: ReturnType<typeof setTimeout> | null = null;

  protected constructor(
    private readonly waitMs: number,
    private readonly collect: CollectGarbage,
    private readonly restartOnTouch: boolean,
  ) {}

  /** Work happened. */
  touch(): void {
    if (this.timer !== null) {
      if (!this.restartOnTouch) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.collect();
    }, this.waitMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Drops a pending collection (the process is leaving). */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * Young collections at most every intervalMs while work goes on (touch()),
 * none once it stops. JavaScriptCore never moves a cell, so the objects a
 * burst of task starts keeps stay in the 16 KiB blocks they were made in;
 * with the burst's garbage collected only as the heap grows, they end up
 * spread over about three times the blocks their size needs. Collected while
 * the burst runs, its garbage's cells are made again by the next starts, and
 * what they keep packs into fewer blocks (docs/performance.md, memory-5).
 *
 *   touch() ─► none pending: a young collection in intervalMs ─► touch() meanwhile: nothing more
 */
export class BurstCollector extends DeferredCollector {
  constructor(intervalMs: number, collect: CollectGarbage = collectYoung) {
    super(intervalMs, collect, false);
  }
}

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
export class SettledCollector extends DeferredCollector {
  constructor(quietMs: number, collect: CollectGarbage = collectGarbage) {
    super(quietMs, collect, true);
  }
}
