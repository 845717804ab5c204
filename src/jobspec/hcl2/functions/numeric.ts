/** cty's number functions, as Nomad's jobspec2 registers them. */
import { asNumber, asString, HclEvalError, type Value } from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";

const num = (args: readonly Value[], i: number) => asNumber(arg(args, i));

const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";
const MAX_BASE = 62;

function parseInteger(text: string, base: number): number {
  if (!Number.isInteger(base) || base < 2 || base > MAX_BASE) throw new HclEvalError(`the base must be a whole number from 2 to ${MAX_BASE}`);
  const negative = text.startsWith("-");
  const digits = negative || text.startsWith("+") ? text.slice(1) : text;
  if (digits === "") throw new HclEvalError(`cannot parse ${JSON.stringify(text)} as a base ${base} integer`);
  let value = 0;
  for (const ch of digits) {
    // Bases above 36 tell upper from lower case (Go's big.Int SetString).
    const digit = base <= 36 ? DIGITS.indexOf(ch.toLowerCase()) : (DIGITS + "ABCDEFGHIJKLMNOPQRSTUVWXYZ").indexOf(ch);
    if (digit === -1 || digit >= base) throw new HclEvalError(`cannot parse ${JSON.stringify(text)} as a base ${base} integer`);
    value = value * base + digit;
  }
  return negative ? -value : value;
}

export const numericFunctions: FunctionTable = {
  abs: arity(1, 1, (args) => Math.abs(num(args, 0))),
  ceil: arity(1, 1, (args) => Math.ceil(num(args, 0))),
  floor: arity(1, 1, (args) => Math.floor(num(args, 0))),
  log: arity(2, 2, (args) => Math.log(num(args, 0)) / Math.log(num(args, 1))),
  max: arity(1, Infinity, (args) => Math.max(...args.map((value) => asNumber(value)))),
  min: arity(1, Infinity, (args) => Math.min(...args.map((value) => asNumber(value)))),
  parseint: arity(2, 2, (args) => parseInteger(asString(arg(args, 0)), num(args, 1))),
  pow: arity(2, 2, (args) => num(args, 0) ** num(args, 1)),
  signum: arity(1, 1, (args) => Math.sign(num(args, 0))),
};
