/**
 * How eagerly the JavaScript engine compiles hot code. A per-task executor
 * is idle almost all its life; each tier of compiled code it accumulates is
 * private memory paid once per task (measured: ~0.3 MiB after a few dozen
 * stats calls). Raising the tier-up thresholds keeps its code interpreted.
 */

/** Multiplies the engine's tier-up thresholds by `scale` (1 = normal). */
export type SlowJitTierUp = (scale: number) => void;

export { slowJitTierUp } from "@drover/runtime/jit.ts";
