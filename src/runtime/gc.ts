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

export { collectGarbage, releaseMemory } from "@drover/runtime/gc.ts";
