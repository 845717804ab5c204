/**
 * When the agent gives the engine's free memory back to the system.
 *
 * A burst of work (hundreds of tasks starting at once, a stream of
 * dispatches) makes garbage many times the size of what stays alive; the
 * periodic full collection frees those objects, but the engine keeps their
 * pages for reuse, so the agent's memory stays at the burst's high-water mark.
 * Measured (docs/performance.md, density): from 100 to 300 raw_exec tasks,
 * about 91 KiB of the agent's memory per task without releases, 64 with, and
 * ~10 MiB less at any size.
 *
 * A release is not free: the engine drops its compiled code and compiles it
 * again as it runs, so one in the middle of work slows the rest of it. It
 * therefore waits for the agent to turn idle (its CPU time under
 * IDLE_CPU_SHARE of a core for IDLE_CHECKS checks in a row), and comes only
 * after work (RELEASE_WORK_CPU_MS of CPU in checks that were not idle, since
 * the last release) that grew the memory by RELEASE_GROWTH_BYTES over its
 * last low point. Without the work condition an idle agent released every
 * RELEASE_MIN_INTERVAL_MS: the garbage it makes between two collections
 * (a bench reading it, say) regrew the pages each release gave back.
 *
 * An earlier rule read the end of a burst from the memory alone (two reads
 * without growth). During a stream of dispatches the memory rises and falls
 * with each collection, so that rule released in the middle of the stream
 * (five times in a 60 s churn run under load), and the last of those reset
 * the low point: the memory the stream's end left was under the growth
 * threshold above that low, and was never given back (132 MiB resident after
 * the run against 92 after the warm-up's release: docs/performance.md, churn).
 *
 *   check (every RELEASE_CHECK_INTERVAL_MS) ─► busy: count its CPU as work
 *     ─► idle for IDLE_CHECKS, after RELEASE_WORK_CPU_MS of work, grown
 *        RELEASE_GROWTH_BYTES over the low? ─► release; work and low anew
 */
import { cpuUsage, memoryUsage } from "node:process";
import { releaseMemory } from "../runtime/gc.ts";
import { intervalService, type Service } from "../lib/service.ts";

/** How often the agent's CPU time and resident memory are read: the end of work is seen within two of these. */
export const RELEASE_CHECK_INTERVAL_MS = 1_000;
/**
 * The share of one core under which a check counts as idle. Measured on an
 * agent left with 2400 finished jobs and its 50 kept allocs: 0.6-2.4 % per
 * second, 4.7-8.4 % in the second that holds the 10 s heap collection; while
 * dispatching 40 jobs a second, 19-130 %.
 */
export const IDLE_CPU_SHARE = 0.1;
/** Idle checks in a row before a release: a second of quiet inside a stream of work is not its end. */
export const IDLE_CHECKS = 2;
/**
 * CPU time spent working (in checks that were not idle) since the last
 * release that makes one worth it: about 25 dispatches or 50 task starts;
 * above what a release's own recompiling costs in the checks after it.
 */
export const RELEASE_WORK_CPU_MS = 500;
/** Growth since the last low point worth a release: below it, what a release gives back does not pay for recompiling. */
export const RELEASE_GROWTH_BYTES = 4 * 1024 * 1024;
/**
 * At most one release in this long, whatever the work does: the compiled
 * code dropped is compiled again. Short, so that a burst soon after an
 * earlier release still has its own once it is over.
 */
export const RELEASE_MIN_INTERVAL_MS = 10_000;

export interface ReleaseParts {
  /** The process's resident memory, bytes. */
  residentBytes(): number;
  /** The CPU time the process has used (user and system, all threads), microseconds. */
  cpuMicros(): number;
  release(): void;
  /** Milliseconds on a monotonic clock. */
  now(): number;
}

/** Decides, at each check, whether to release; it keeps the memory's low point and the last check's clock readings. */
export class ReleasePolicy {
  /** Zero at first: the agent's own start is its first burst. */
  private low: number | undefined = 0;
  private last: { cpuMicros: number; at: number } | undefined;
  private idleChecks = 0;
  /** CPU time of the checks that were not idle since the last release, microseconds; the start counts as work. */
  private workMicros = RELEASE_WORK_CPU_MS * 1000;
  private releasedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly parts: ReleaseParts) {}

  check(): void {
    const resident = this.parts.residentBytes();
    const now = this.parts.now();
    const cpuMicros = this.parts.cpuMicros();
    const previous = this.last;
    this.last = { cpuMicros, at: now };
    this.low = Math.min(this.low ?? resident, resident);
    if (previous === undefined) return;
    const used = cpuMicros - previous.cpuMicros;
    if (used / 1000 / Math.max(1, now - previous.at) < IDLE_CPU_SHARE) this.idleChecks++;
    else {
      this.idleChecks = 0;
      this.workMicros += used;
    }
    if (this.idleChecks < IDLE_CHECKS || this.workMicros < RELEASE_WORK_CPU_MS * 1000) return;
    if (resident - this.low < RELEASE_GROWTH_BYTES || now - this.releasedAt < RELEASE_MIN_INTERVAL_MS) return;
    this.parts.release();
    this.releasedAt = now;
    this.workMicros = 0;
    // The release lands once the current task returns, and the allocators hand their pages back over the next moments: the low point is read after it.
    this.low = undefined;
  }
}

export function heapReleaseService(): Service {
  const policy = new ReleasePolicy({
    residentBytes: () => memoryUsage.rss(),
    cpuMicros: () => {
      const { user, system } = cpuUsage();
      return user + system;
    },
    release: releaseMemory,
    now: () => performance.now(),
  });
  return intervalService("heap-release", RELEASE_CHECK_INTERVAL_MS, () => policy.check());
}
