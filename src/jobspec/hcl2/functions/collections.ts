/** cty's collection functions (lists, maps, sets), as Nomad's jobspec2 registers them. */
import {
  asList,
  asNumber,
  asObject,
  asString,
  distinct,
  HclEvalError,
  isObjectValue,
  sortedKeys,
  typeName,
  valuesEqual,
  type ObjectValue,
  type Value,
} from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";

const list = (args: readonly Value[], i: number) => asList(arg(args, i));
const whole = (value: Value, what: string): number => {
  const n = asNumber(value, what);
  if (!Number.isInteger(n)) throw new HclEvalError(`${what} must be a whole number, got ${n}`);
  return n;
};

function flatten(items: readonly Value[]): Value[] {
  return items.flatMap((item) => (Array.isArray(item) ? flatten(item) : [item]));
}

function range(args: readonly Value[]): Value[] {
  const numbers = args.map((value) => asNumber(value));
  const [start, limit, step] =
    numbers.length === 1 ? [0, numbers[0]!, 1] : numbers.length === 2 ? [numbers[0]!, numbers[1]!, numbers[0]! <= numbers[1]! ? 1 : -1] : (numbers as [number, number, number]);
  if (step === 0) throw new HclEvalError("step must not be zero");
  if ((step > 0 && start > limit) || (step < 0 && start < limit)) throw new HclEvalError("step goes the other way from start to limit");
  const out: Value[] = [];
  for (let n = start; step > 0 ? n < limit : n > limit; n += step) {
    if (out.length >= RANGE_LIMIT) throw new HclEvalError(`more than ${RANGE_LIMIT} elements`);
    out.push(n);
  }
  return out;
}

/** cty's cap on range(): a list larger than this is a mistake, not a job. */
const RANGE_LIMIT = 1024;

function setproduct(sets: Value[][]): Value[] {
  return sets.reduce<Value[][]>((product, set) => product.flatMap((prefix) => set.map((item) => [...prefix, item])), [[]]);
}

function sortStrings(items: readonly Value[]): Value[] {
  return items.map((item) => asString(item, "sort(): every element: a string")).sort();
}

export const collectionFunctions: FunctionTable = {
  chunklist: arity(2, 2, (args) => {
    const items = list(args, 0);
    const size = whole(arg(args, 1), "the chunk size");
    if (size < 0) throw new HclEvalError("the chunk size must not be negative");
    if (size === 0) return [items];
    const out: Value[] = [];
    for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
    return out;
  }),
  coalesce: arity(1, Infinity, (args) => {
    const found = args.find((value) => value !== null && value !== "");
    if (found === undefined) throw new HclEvalError("no non-null, non-empty-string arguments");
    return found;
  }),
  coalescelist: arity(1, Infinity, (args) => args.find((value) => asList(value).length > 0) ?? []),
  compact: arity(1, 1, (args) => list(args, 0).filter((item) => item !== null && item !== "")),
  concat: arity(1, Infinity, (args) => args.flatMap((value) => asList(value))),
  contains: arity(2, 2, (args) => list(args, 0).some((item) => valuesEqual(item, arg(args, 1)))),
  distinct: arity(1, 1, (args) => distinct(list(args, 0))),
  element: arity(2, 2, (args) => {
    const items = list(args, 0);
    if (items.length === 0) throw new HclEvalError("cannot use element() on an empty list");
    const i = whole(arg(args, 1), "the index");
    if (i < 0) throw new HclEvalError("the index must not be negative");
    return items[i % items.length]!;
  }),
  flatten: arity(1, 1, (args) => flatten(list(args, 0))),
  index: arity(2, 2, (args) => {
    const i = list(args, 0).findIndex((item) => valuesEqual(item, arg(args, 1)));
    if (i === -1) throw new HclEvalError("the item is not in the list");
    return i;
  }),
  keys: arity(1, 1, (args) => sortedKeys(asObject(arg(args, 0)))),
  length: arity(1, 1, (args) => {
    const value = arg(args, 0);
    if (typeof value === "string") return [...value].length;
    if (Array.isArray(value)) return value.length;
    if (isObjectValue(value)) return Object.keys(value).length;
    throw new HclEvalError(`a collection or string is required, got ${value === null ? "null" : `a ${typeName(value)}`}`);
  }),
  lookup: arity(2, 3, (args) => {
    const map = asObject(arg(args, 0));
    const key = asString(arg(args, 1));
    if (key in map) return map[key]!;
    if (args.length === 3) return arg(args, 2);
    throw new HclEvalError(`the map has no element for the key "${key}"`);
  }),
  merge: arity(0, Infinity, (args) => {
    const out: ObjectValue = {};
    for (const value of args) if (value !== null) Object.assign(out, asObject(value));
    return out;
  }),
  range: arity(1, 3, range),
  reverse: arity(1, 1, (args) => [...list(args, 0)].reverse()),
  setintersection: arity(1, Infinity, (args) => {
    const [first, ...rest] = args.map((value) => asList(value));
    return distinct(first!.filter((item) => rest.every((set) => set.some((other) => valuesEqual(item, other)))));
  }),
  setproduct: arity(1, Infinity, (args) => setproduct(args.map((value) => distinct(asList(value))))),
  setunion: arity(1, Infinity, (args) => distinct(args.flatMap((value) => asList(value)))),
  slice: arity(3, 3, (args) => {
    const items = list(args, 0);
    const start = whole(arg(args, 1), "the start index");
    const end = whole(arg(args, 2), "the end index");
    if (start < 0 || end > items.length || start > end) throw new HclEvalError(`indexes ${start} and ${end} do not fit a list of ${items.length}`);
    return items.slice(start, end);
  }),
  sort: arity(1, 1, (args) => sortStrings(list(args, 0))),
  values: arity(1, 1, (args) => {
    const map = asObject(arg(args, 0));
    return sortedKeys(map).map((key) => map[key]!);
  }),
  zipmap: arity(2, 2, (args) => {
    const keys = list(args, 0);
    const values = list(args, 1);
    if (keys.length !== values.length) throw new HclEvalError(`${keys.length} keys but ${values.length} values`);
    return Object.fromEntries(keys.map((key, i) => [asString(key, "every key: a string"), values[i]!]));
  }),
};
