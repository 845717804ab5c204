/**
 * A replacement alloc (job update) waits for the alloc it replaces to finish,
 * and with ephemeral_disk sticky or migrate takes over its alloc/data, so a
 * service's data survives the update. Done once; a restored runner skips it.
 */
import type { AllocDir } from "../../allocdir/alloc-dir.ts";
import type { AllocHook } from "./hook.ts";
import type { StopSignal } from "../../../lib/stop-flag.ts";
import { allocTaskGroup } from "../../../structs/alloc.ts";

export interface PreviousAllocs {
  /** Resolves once the alloc is terminal on this node, with its directory; null when it is gone. */
  waitTerminal(allocId: string): Promise<AllocDir | null>;
}

/** Keeps nothing per alloc: one serves every alloc runner. `onMigrated` learns which alloc took over which one's data. */
export function previousAllocHook(previous: PreviousAllocs, onMigrated: (from: string, to: string) => void = () => {}): AllocHook {
  return {
    name: "previous_alloc",
    async prerun(ctx) {
      const { alloc, allocDir } = ctx;
      if (!alloc.PreviousAllocation) return { done: true };
      const stopping = ctx.stopping;
      const previousDir = await untilStopped(previous.waitTerminal(alloc.PreviousAllocation), stopping);
      // Stopped while waiting: nothing of this alloc will run, and its dir may be going.
      if (stopping.stopped) return;
      const disk = allocTaskGroup(alloc)?.EphemeralDisk;
      if (previousDir && (disk?.Sticky || disk?.Migrate)) {
        allocDir.moveDataFrom(previousDir);
        onMigrated(alloc.PreviousAllocation, alloc.ID);
      }
      return { done: true };
    },
  };
}

/** `wait`'s result, or undefined as soon as the alloc is stopping. */
function untilStopped<T>(wait: Promise<T>, stopping: StopSignal): Promise<T | undefined> {
  if (stopping.stopped) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const unsubscribe = stopping.onStop(() => resolve(undefined));
    wait.then(resolve, reject).finally(unsubscribe);
  });
}
