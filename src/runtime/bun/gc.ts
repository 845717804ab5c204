/** runtime/gc.ts on Bun: JavaScriptCore's full collection. */
import type { CollectGarbage, ReleaseMemory } from "../gc.ts";

export const collectGarbage: CollectGarbage = () => Bun.gc(true);

/** JavaScriptCore's eden collection: the objects made since the last collection only. */
export const collectYoung: CollectGarbage = () => Bun.gc(false);

/**
 * JavaScriptCore's shrinkFootprintWhenIdle: once the event loop is idle, it
 * drops compiled code, collects fully and returns the allocators' free pages
 * to the system. A collection alone frees objects but keeps their pages.
 */
export const releaseMemory: ReleaseMemory = () => Bun.shrink();
