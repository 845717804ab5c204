/**
 * When the agent gives the engine's free memory back to the system.
 *
 * A burst of work (hundreds of tasks starting at once) makes garbage many
 * times the size of what stays alive; the periodic full collection frees
 * those objects, but the engine keeps their pages for reuse, so the agent's
 * memory stays at the burst's high-water mark. Measured (docs/performance.md,
 * density): from 100 to 300 raw_exec tasks, about 91 KiB of the agent's memory
 * per task without releases, 64 with, and ~10 MiB less at any size (compiled
 * code and free pages of the agent's own start, its first burst, given back
 * once it is steady). A release is not free (the engine
 * drops its compiled code and compiles it again as it runs), so it comes once
 * the memory has grown by RELEASE_GROWTH_BYTES since the last low point and has
 * stopped growing: after a burst, not during one nor on every idle tick.
 */
import { memoryUsage } from "node:process";
import { releaseMemory } from "../runtime/gc.ts";
import { intervalService, type Service } from "../lib/service.ts";

/** How often the agent's resident memory is read: a burst's end is seen within this. */
export const RELEASE_CHECK_INTERVAL_MS = 2_000;
/** Growth since the last low point worth a release: about 50 tasks' start garbage. */
export const RELEASE_GROWTH_BYTES = 4 * 1024 * 1024;
/** Growth between two checks below which the memory is steady. */
export const BURST_OVER_BYTES = 1024 * 1024;
/**
 * Steady checks in a row that end a burst: a start stalled on the kernel for
 * one check is not its end, and a release in the middle of one would have the
 * rest of it run while the engine compiles its code again.
 */
export const BURST_OVER_CHECKS = 2;
/**
 * At most one release in this long, whatever the memory does: the compiled
 * code dropped is compiled again. Short, so that a burst soon after an
 * earlier release still has its own once it is over (at 30 s, measured: the
 * 500-task burst's release waited past the reading, and the agent read higher
 * than with no releases at all).
 */
export const RELEASE_MIN_INTERVAL_MS = 10_000;

export interface ReleaseParts {
  /** The process's resident memory, bytes. */
  residentBytes(): number;
  release(): void;
  now(): number;
}

/** Decides, at each check, whether to release; it keeps the memory's low point and its last reading. */
export class ReleasePolicy {
  /** Zero at first: the agent's own start is its first burst. */
  private low: number | undefined = 0;
  private last: number | undefined;
  private steadyChecks = 0;
  private releasedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly parts: ReleaseParts) {}

  check(): void {
    const resident = this.parts.residentBytes();
    const previous = this.last;
    this.last = resident;
    this.low = Math.min(this.low ?? resident, resident);
    const grown = resident - this.low;
    this.steadyChecks = previous !== undefined && resident - previous < BURST_OVER_BYTES ? this.steadyChecks + 1 : 0;
    const now = this.parts.now();
    if (grown < RELEASE_GROWTH_BYTES || this.steadyChecks < BURST_OVER_CHECKS || now - this.releasedAt < RELEASE_MIN_INTERVAL_MS) return;
    this.parts.release();
    this.releasedAt = now;
    // The release lands when the event loop is next idle: the low point is read after it.
    this.low = undefined;
  }
}

export function heapReleaseService(): Service {
  const policy = new ReleasePolicy({ residentBytes: () => memoryUsage.rss(), release: releaseMemory, now: () => performance.now() });
  return intervalService("heap-release", RELEASE_CHECK_INTERVAL_MS, () => policy.check());
}
