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

export function diskLimitHook(logger: Logger, intervalMs = DISK_CHECK_INTERVAL_MS): AllocHook {
  let timer: ReturnType<typeof setInterval> | undefined;
  let firstCheck: ReturnType<typeof setTimeout> | undefined;
  let checking = false;
  // Listings kept from one check to the next: most directories of an alloc do not change.
  const listings = new DirListings();
  const stop = async () => {
    clearTimeout(firstCheck);
    clearInterval(timer);
    firstCheck = undefined;
    timer = undefined;
  };

  const check = async (ctx: AllocHookContext, limitMb: number) => {
    if (checking || ctx.stopping.aborted) return;
    checking = true;
    try {
      const usage = await dirUsage(ctx.allocDir.path, DISK_CHECK_MAX_ENTRIES, listings);
      const over = usage.truncated || usage.bytes > limitMb * BYTES_PER_MIB;
      if (!over || ctx.stopping.aborted) return;
      await stop();
      const used = usage.truncated ? `more than ${DISK_CHECK_MAX_ENTRIES} files` : `${Math.ceil(usage.bytes / BYTES_PER_MIB)} MB`;
      logger.warn({ alloc_id: ctx.alloc.ID, used_bytes: usage.bytes, limit_mb: limitMb }, "alloc exceeded its ephemeral disk; killing its tasks");
      ctx.killTasks(() =>
        taskEvent(TASK_EVENT.DiskExceeded, {
          DiskLimit: limitMb,
          Message: `the alloc uses ${used} of disk, over its ephemeral_disk size of ${limitMb} MB`,
          FailsTask: true,
        }),
      );
    } finally {
      checking = false;
    }
  };

  return {
    name: "disk_limit",
    async prerun(ctx) {
      const limitMb = allocTaskGroup(ctx.alloc)?.EphemeralDisk.SizeMB;
      if (!limitMb || isOwnFileSystem(ctx.allocDir.path)) return;
      await stop();
      // A random phase spreads the walks of allocs started together over the interval.
      firstCheck = setTimeout(() => {
        firstCheck = undefined;
        if (ctx.stopping.aborted) return;
        void check(ctx, limitMb);
        timer = setInterval(() => void check(ctx, limitMb), intervalMs);
      }, Math.random() * intervalMs);
      ctx.stopping.addEventListener("abort", () => void stop(), { once: true });
    },
    postrun: stop,
    destroy: stop,
    shutdown: stop,
  };
}
