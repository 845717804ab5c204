/**
 * runtime/gc.ts on Deno: V8 offers a collection to scripts only with
 * --expose-gc, which drover does not pass; V8's own heuristics apply.
 */
import type { CollectGarbage } from "../gc.ts";

export const collectGarbage: CollectGarbage = () => {};
