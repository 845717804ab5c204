/**
 * Declaring a function's parameters once: each function in this folder says
 * how many arguments it takes and reads them through these checks, so every
 * wrong call gets the same kind of message.
 */
import type { HclFunction } from "../expressions.ts";
import { HclEvalError, type Value } from "../values.ts";

/** `fn` called with between `min` and `max` arguments (max Infinity: variadic). */
export function arity(min: number, max: number, fn: HclFunction): HclFunction {
  return (args) => {
    if (args.length < min || args.length > max) {
      const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
      throw new HclEvalError(`takes ${wanted} argument(s), got ${args.length}`);
    }
    return fn(args);
  };
}

/** The argument at `i` (arity has checked that it is there). */
export const arg = (args: readonly Value[], i: number): Value => args[i] ?? null;

export type FunctionTable = Record<string, HclFunction>;
