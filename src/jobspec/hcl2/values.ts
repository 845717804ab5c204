/**
 * The values HCL2 expressions produce, as plain JavaScript data (cty's
 * string, number, bool, null, list/tuple/set as arrays, map/object as
 * objects), and the one error every evaluation step throws.
 *
 * A reference only the client can resolve (`${attr.kernel.name}`,
 * `${NOMAD_ALLOC_ID}`) evaluates, as in Nomad's jobspec2, to its own text
 * wrapped in `${...}`; its `$` is written as KEPT_DOLLAR inside values so that
 * the job document can tell it from a `${` the file escaped as `$${`.
 */

export type Value = string | number | boolean | null | Value[] | { [key: string]: Value };
export type ObjectValue = { [key: string]: Value };

/** Stands for the `$` of a kept client reference inside a string value (a private-use character). */
export const KEPT_DOLLAR = "\uE000";

/** A problem evaluating an expression; the document walker prefixes the field path. */
export class HclEvalError extends Error {
  override name = "HclEvalError";
}

export const isObjectValue = (value: Value | undefined): value is ObjectValue =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** cty's name for a value's type, for messages. */
export function typeName(value: Value): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "tuple";
  if (typeof value === "object") return "object";
  return typeof value === "boolean" ? "bool" : typeof value;
}

/** Numbers as cty writes them in strings: integers without a fraction, others in their shortest form. */
export function numberToString(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0);
  return String(n);
}

/** A value as a template (or a string-typed argument) takes it. */
export function asString(value: Value, what = "a string"): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return numberToString(value);
  if (typeof value === "boolean") return String(value);
  if (value === null) throw new HclEvalError(`${what} is required, got null`);
  throw new HclEvalError(`${what} is required, got a ${typeName(value)}`);
}

export function asNumber(value: Value, what = "a number"): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  throw new HclEvalError(`${what} is required, got ${value === null ? "null" : `a ${typeName(value)}`}`);
}

export function asBool(value: Value, what = "a bool"): boolean {
  if (typeof value === "boolean") return value;
  if (value === "true" || value === "false") return value === "true";
  throw new HclEvalError(`${what} is required, got ${value === null ? "null" : `a ${typeName(value)}`}`);
}

export function asList(value: Value, what = "a list"): Value[] {
  if (Array.isArray(value)) return value;
  throw new HclEvalError(`${what} is required, got ${value === null ? "null" : `a ${typeName(value)}`}`);
}

export function asObject(value: Value, what = "a map"): ObjectValue {
  if (isObjectValue(value)) return value;
  throw new HclEvalError(`${what} is required, got ${value === null ? "null" : `a ${typeName(value)}`}`);
}

/** Deep equality as HCL's `==` sees it (numbers and strings of one value differ). */
export function valuesEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => valuesEqual(item, b[i]!));
  if (isObjectValue(a) && isObjectValue(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && valuesEqual(a[key]!, b[key]!));
  }
  return false;
}

/** Object keys in cty's order (lexical), which is how maps and objects iterate. */
export const sortedKeys = (object: ObjectValue): string[] => Object.keys(object).sort();

/** Distinct values in first-seen order (cty sets hold each value once). */
export function distinct(values: readonly Value[]): Value[] {
  const out: Value[] = [];
  for (const value of values) if (!out.some((seen) => valuesEqual(seen, value))) out.push(value);
  return out;
}
