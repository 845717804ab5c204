/**
 * runtime/gc.ts on Deno: V8 offers a collection to scripts only with
 * --expose-gc, which drover does not pass; V8's own heuristics apply, and
 * V8 returns freed pages to the system itself.
 */
import type { CollectGarbage, ReleaseMemory } from "../gc.ts";

export const collectGarbage: CollectGarbage = () => {};

export const collectYoung: CollectGarbage = () => {};

export const releaseMemory: ReleaseMemory = () => {};
