/**
 * ephemeral_disk { size } as a limit: Nomad documents the size as what the
 * alloc may use, and drover enforces it. Where the alloc dir is a file
 * system of its own (allocdir/disk-image.ts), that file system refuses a
 * write past the size and nothing is polled. Elsewhere the alloc dir (shared
 * alloc/ with its logs and data, and every task dir) is measured on a timer;
 * an alloc over its size has every task killed with "Disk Resources
 * Exceeded", which fails the alloc.
 *
 *   prerun ──> every DISK_CHECK_INTERVAL_MS (from a random phase): usage of the alloc dir (du -sx)
 *                 usage > size ──> kill the tasks (Disk Resources Exceeded, DiskLimit) ──> stop checking
 *   the alloc stops / postrun / destroy / shutdown ──> stop checking
 */
import type { Logger } from "../../../lib/logger.ts";
import { BYTES_PER_MIB } from "../../../lib/units.ts";
import { DirListings, dirUsage } from "../../../stats/dir-usage.ts";
import { allocTaskGroup } from "../../../structs/alloc.ts";
import { TASK_EVENT } from "../../../structs/task-state.ts";
import { taskEvent } from "../../taskrunner/task-state.ts";
import { isOwnFileSystem } from "../../allocdir/disk-image.ts";
import type { AllocHook, AllocHookContext } from "./hook.ts";

/** How often an alloc's usage is measured: a task can overshoot by what it writes in this time. */
export const DISK_CHECK_INTERVAL_MS = 5_000;

/** Beyond this many entries the walk stops, and the alloc counts as over its size (it would also exhaust inodes). */
export const DISK_CHECK_MAX_ENTRIES = 200_000;

/** A class, its methods on the prototype: one lives per running alloc (issue 35: the agent's memory per task). */
class DiskLimitHook implements AllocHook {
  readonly name = "disk_limit";
  private timer: ReturnType<typeof setInterval> | undefined;
  private firstCheck: ReturnType<typeof setTimeout> | undefined;
  private checking = false;
  /** Listings kept from one check to the next (most directories of an alloc do not change); made with the first check. */
  private listings: DirListings | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  async prerun(ctx: AllocHookContext): Promise<void> {
    const limitMb = allocTaskGroup(ctx.alloc)?.EphemeralDisk.SizeMB;
    if (!limitMb || isOwnFileSystem(ctx.allocDir.path)) return;
    this.stopChecking();
    // A random phase spreads the walks of allocs started together over the interval.
    this.firstCheck = setTimeout(() => {
      this.firstCheck = undefined;
      if (ctx.stopping.stopped) return;
      void this.check(ctx, limitMb);
      this.timer = setInterval(() => void this.check(ctx, limitMb), this.intervalMs);
    }, Math.random() * this.intervalMs);
    ctx.stopping.onStop(() => this.stopChecking());
  }

  async postrun(): Promise<void> {
    this.stopChecking();
  }

  async destroy(): Promise<void> {
    this.stopChecking();
  }

  async shutdown(): Promise<void> {
    this.stopChecking();
  }

  private stopChecking(): void {
    clearTimeout(this.firstCheck);
    clearInterval(this.timer);
    this.firstCheck = undefined;
    this.timer = undefined;
  }

  private async check(ctx: AllocHookContext, limitMb: number): Promise<void> {
    if (this.checking || ctx.stopping.stopped) return;
    this.checking = true;
    try {
      const usage = await dirUsage(ctx.allocDir.path, DISK_CHECK_MAX_ENTRIES, (this.listings ??= new DirListings()));
      const over = usage.truncated || usage.bytes > limitMb * BYTES_PER_MIB;
      if (!over || ctx.stopping.stopped) return;
      this.stopChecking();
      const used = usage.truncated ? `more than ${DISK_CHECK_MAX_ENTRIES} files` : `${Math.ceil(usage.bytes / BYTES_PER_MIB)} MB`;
      this.logger.warn({ alloc_id: ctx.alloc.ID, used_bytes: usage.bytes, limit_mb: limitMb }, "alloc exceeded its ephemeral disk; killing its tasks");
      ctx.killTasks(() =>
        taskEvent(TASK_EVENT.DiskExceeded, {
          DiskLimit: limitMb,
          Message: `the alloc uses ${used} of disk, over its ephemeral_disk size of ${limitMb} MB`,
          FailsTask: true,
        }),
      );
    } finally {
      this.checking = false;
    }
  }
}

export function diskLimitHook(logger: Logger, intervalMs = DISK_CHECK_INTERVAL_MS): AllocHook {
  return new DiskLimitHook(logger, intervalMs);
}
