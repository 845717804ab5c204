/** runtime/gc.ts on Bun: JavaScriptCore's full collection. */
import type { CollectGarbage } from "../gc.ts";

export const collectGarbage: CollectGarbage = () => Bun.gc(true);
