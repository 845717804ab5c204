/**
 * A full garbage collection, asked for by a long-lived process that knows
 * when one pays off. The engine sizes its heap from what is alive, so a
 * process holding many small live objects (an agent with a thousand tasks)
 * lets garbage pile up to about as much again before it collects; a
 * collection on a timer keeps its memory near what is alive.
 */

/** Collects now, synchronously; a no-op on a runtime that does not offer it. */
export function collectGarbage(): void {
  const runtime = (globalThis as { Bun?: { gc?: (force: boolean) => void } }).Bun;
  runtime?.gc?.(true);
}
