/** runtime/jit.ts on Bun: JavaScriptCore's JIT policy. */
import type { SlowJitTierUp } from "../jit.ts";

export const slowJitTierUp: SlowJitTierUp = (scale) => Bun.unsafe.setJITPolicy(scale);
