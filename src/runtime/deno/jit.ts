/**
 * runtime/jit.ts on Deno: V8 reads its tiering flags only at start, so an idle
 * role gets them in its environment instead (deno/self.ts); nothing to do here.
 */
import type { SlowJitTierUp } from "../jit.ts";

export const slowJitTierUp: SlowJitTierUp = () => {};
