/**
 * Evaluating syntax.ts's trees over a scope: the names an expression may use
 * (`var`, `local`, a for expression's or a dynamic block's iterator) and the
 * functions it may call. A traversal whose root the scope does not know is a
 * reference for the client to resolve, and evaluates to its own text in
 * `${...}`, as Nomad's jobspec2 leaves it (values.ts's KEPT_DOLLAR marks it).
 */
import { type Expr, type ForExpr, type Step, type TemplatePart } from "./syntax.ts";
import { convert, typeFromExpr } from "./types.ts";
import {
  asBool,
  asNumber,
  asString,
  HclEvalError,
  isObjectValue,
  KEPT_DOLLAR,
  sortedKeys,
  typeName,
  valuesEqual,
  type ObjectValue,
  type Value,
} from "./values.ts";

export type HclFunction = (args: Value[]) => Value;

/**
 * An object whose attributes are evaluated when first read (`local`): a
 * local may use another local written after it, and a cycle is found when
 * one is read while it is being evaluated.
 */
export class LazyObject {
  constructor(
    /** What an attribute is called in messages ("variable", "local"). */
    readonly noun: string,
    readonly names: readonly string[],
    readonly read: (name: string) => Value,
  ) {}

  all(): ObjectValue {
    return Object.fromEntries(this.names.map((name) => [name, this.read(name)]));
  }
}

export interface Scope {
  /** Names a traversal may start at. */
  readonly names: ReadonlyMap<string, Value | LazyObject>;
  readonly functions: Readonly<Record<string, HclFunction>>;
  /** When false, a traversal from an unknown root is an error instead of a kept reference (validation conditions). */
  readonly keepUnknown: boolean;
}

/** The same scope with more names (a for expression's or iterator's variables). */
export function withNames(scope: Scope, names: Record<string, Value | LazyObject>): Scope {
  const merged = new Map(scope.names);
  for (const [name, value] of Object.entries(names)) merged.set(name, value);
  return { ...scope, names: merged };
}

function resolve(scope: Scope, name: string): Value | undefined {
  const found = scope.names.get(name);
  return found instanceof LazyObject ? found.all() : found;
}

function describeStep(step: Step): string {
  return "name" in step ? `.${step.name}` : `[${JSON.stringify(step.key)}]`;
}

function attribute(target: Value, name: string): Value {
  if (isObjectValue(target)) {
    if (!(name in target)) throw new HclEvalError(`this object has no attribute "${name}"`);
    return target[name]!;
  }
  if (target === null) throw new HclEvalError(`cannot read attribute "${name}" of null`);
  throw new HclEvalError(`cannot read attribute "${name}" of a ${typeName(target)}`);
}

function index(target: Value, key: Value): Value {
  if (Array.isArray(target)) {
    const i = asNumber(key, "an index");
    if (!Number.isInteger(i) || i < 0 || i >= target.length) {
      throw new HclEvalError(`index ${i} is out of range for a list of ${target.length} element(s)`);
    }
    return target[i]!;
  }
  if (isObjectValue(target)) {
    const name = asString(key, "a key");
    if (!(name in target)) throw new HclEvalError(`the map has no element for the key "${name}"`);
    return target[name]!;
  }
  if (target === null) throw new HclEvalError("cannot index null");
  throw new HclEvalError(`cannot index a ${typeName(target)}`);
}

function traversal(expr: Extract<Expr, { kind: "traversal" }>, scope: Scope): Value {
  const root = scope.names.get(expr.root);
  if (root === undefined) {
    if (!scope.keepUnknown) throw new HclEvalError(`unknown variable "${expr.root}"`);
    return `${KEPT_DOLLAR}{${expr.source}}`;
  }
  let steps = expr.steps;
  let path = expr.root;
  let value: Value;
  const [first] = steps;
  if (root instanceof LazyObject && first !== undefined && "name" in first) {
    if (!root.names.includes(first.name)) throw new HclEvalError(`${path}.${first.name}: no ${root.noun} "${first.name}" is declared`);
    value = root.read(first.name);
    path += `.${first.name}`;
    steps = steps.slice(1);
  } else value = root instanceof LazyObject ? root.all() : root;
  for (const step of steps) {
    try {
      value = "name" in step ? attribute(value, step.name) : index(value, step.key);
    } catch (err) {
      if (err instanceof HclEvalError) throw new HclEvalError(`${path}${describeStep(step)}: ${err.message}`);
      throw err;
    }
    path += describeStep(step);
  }
  return value;
}

function compare(op: "<" | ">" | "<=" | ">=", left: number, right: number): boolean {
  if (op === "<") return left < right;
  if (op === ">") return left > right;
  if (op === "<=") return left <= right;
  return left >= right;
}

function arithmetic(op: "+" | "-" | "*" | "/" | "%", left: number, right: number): number {
  switch (op) {
    case "+":
      return left + right;
    case "-":
      return left - right;
    case "*":
      return left * right;
    case "/":
      if (right === 0) throw new HclEvalError("division by zero");
      return left / right;
    case "%":
      if (right === 0) throw new HclEvalError("modulo by zero");
      return left % right;
  }
}

function binary(expr: Extract<Expr, { kind: "binary" }>, scope: Scope): Value {
  const { op } = expr;
  if (op === "&&" || op === "||") {
    const left = asBool(evaluate(expr.left, scope), `the left operand of ${op}: a bool`);
    const right = asBool(evaluate(expr.right, scope), `the right operand of ${op}: a bool`);
    return op === "&&" ? left && right : left || right;
  }
  const left = evaluate(expr.left, scope);
  const right = evaluate(expr.right, scope);
  if (op === "==") return valuesEqual(left, right);
  if (op === "!=") return !valuesEqual(left, right);
  const a = asNumber(left, `the left operand of ${op}: a number`);
  const b = asNumber(right, `the right operand of ${op}: a number`);
  if (op === "<" || op === ">" || op === "<=" || op === ">=") return compare(op, a, b);
  return arithmetic(op, a, b);
}

/** The pairs a for expression or `%{for}` iterates: a list's index and element, a map's key and value (in key order). */
export function iterate(collection: Value): [Value, Value][] {
  if (Array.isArray(collection)) return collection.map((item, i) => [i, item]);
  if (isObjectValue(collection)) return sortedKeys(collection).map((key) => [key, collection[key]!]);
  if (collection === null) throw new HclEvalError("cannot iterate over null");
  throw new HclEvalError(`cannot iterate over a ${typeName(collection)}`);
}

function forExpression(expr: ForExpr, scope: Scope): Value {
  const pairs = iterate(evaluate(expr.collection, scope));
  const tuple: Value[] = [];
  const object: ObjectValue = {};
  for (const [key, value] of pairs) {
    const names: Record<string, Value> = { [expr.valueVar]: value };
    if (expr.keyVar !== undefined) names[expr.keyVar] = key;
    const inner = withNames(scope, names);
    if (expr.condition && !asBool(evaluate(expr.condition, inner), "the for expression's if condition: a bool")) continue;
    const result = evaluate(expr.value, inner);
    if (expr.key === undefined) {
      tuple.push(result);
      continue;
    }
    const name = asString(evaluate(expr.key, inner), "a for expression's key: a string");
    if (expr.group) {
      const existing = object[name];
      object[name] = Array.isArray(existing) ? [...existing, result] : [result];
    } else {
      if (name in object) throw new HclEvalError(`the for expression produced the key "${name}" twice (add "..." after the value to group them)`);
      object[name] = result;
    }
  }
  return expr.key === undefined ? tuple : object;
}

function splat(expr: Extract<Expr, { kind: "splat" }>, scope: Scope): Value {
  const source = evaluate(expr.source, scope);
  if (source === null) return [];
  const items = Array.isArray(source) ? source : [source];
  const results = items.map((item) => evaluate(expr.each, withNames(scope, { [SPLAT_ITEM]: item })));
  return Array.isArray(source) ? results : results[0]!;
}

/** The scope name of the element a splat's steps apply to (not a valid identifier, so no clash). */
const SPLAT_ITEM = " item";

/** `try(a, b, ...)`: the first argument that evaluates without an error; `can(a)`: whether it does. */
function tryOrCan(expr: Extract<Expr, { kind: "call" }>, scope: Scope): Value {
  for (const arg of expr.args) {
    try {
      const value = evaluate(arg, scope);
      if (expr.name === "can") return true;
      return value;
    } catch (err) {
      if (!(err instanceof HclEvalError)) throw err;
    }
  }
  if (expr.name === "can") return false;
  throw new HclEvalError("try(): no argument could be evaluated without an error");
}

/** `convert(value, type)`: the second argument is a type constraint, not a value. */
function convertCall(expr: Extract<Expr, { kind: "call" }>, scope: Scope): Value {
  const [value, type] = expr.args;
  if (value === undefined || type === undefined || expr.args.length !== 2) throw new HclEvalError("convert(): takes a value and a type");
  try {
    return convert(evaluate(value, scope), typeFromExpr(type));
  } catch (err) {
    if (err instanceof HclEvalError) throw new HclEvalError(`convert(): ${err.message}`);
    throw err;
  }
}

function call(expr: Extract<Expr, { kind: "call" }>, scope: Scope): Value {
  if (expr.name === "try" || expr.name === "can") return tryOrCan(expr, scope);
  if (expr.name === "convert") return convertCall(expr, scope);
  const fn = scope.functions[expr.name];
  if (!fn) throw new HclEvalError(`there is no function named "${expr.name}"`);
  let args = expr.args.map((arg) => evaluate(arg, scope));
  if (expr.expand) {
    const last = args.at(-1) ?? null;
    if (!Array.isArray(last)) throw new HclEvalError(`the last argument of ${expr.name}(...) must be a list to expand with "..."`);
    args = [...args.slice(0, -1), ...last];
  }
  try {
    return fn(args);
  } catch (err) {
    if (err instanceof HclEvalError) throw new HclEvalError(`${expr.name}(): ${err.message}`);
    throw err;
  }
}

export function evaluate(expr: Expr, scope: Scope): Value {
  switch (expr.kind) {
    case "literal":
      return expr.value;
    case "template":
      return evaluateTemplate(expr.parts, scope);
    case "traversal":
      return traversal(expr, scope);
    case "attribute":
      return attribute(evaluate(expr.target, scope), expr.name);
    case "index":
      return index(evaluate(expr.target, scope), evaluate(expr.key, scope));
    case "splat":
      return splat(expr, scope);
    case "item":
      return resolve(scope, SPLAT_ITEM) ?? null;
    case "call":
      return call(expr, scope);
    case "tuple":
      return expr.items.map((item) => evaluate(item, scope));
    case "object": {
      const out: ObjectValue = {};
      for (const item of expr.items) out[asString(evaluate(item.key, scope), "an object key: a string")] = evaluate(item.value, scope);
      return out;
    }
    case "conditional":
      return asBool(evaluate(expr.condition, scope), "the condition: a bool") ? evaluate(expr.then, scope) : evaluate(expr.otherwise, scope);
    case "unary": {
      const operand = evaluate(expr.operand, scope);
      return expr.op === "!" ? !asBool(operand, "the operand of !: a bool") : -asNumber(operand, "the operand of -: a number");
    }
    case "binary":
      return binary(expr, scope);
    case "for":
      return forExpression(expr, scope);
  }
}

function interpolated(value: Value): string {
  if (value === null) throw new HclEvalError("a template interpolation's value is null");
  if (typeof value === "object") throw new HclEvalError(`a template cannot insert a ${typeName(value)}; only strings, numbers and bools`);
  return asString(value);
}

function renderParts(parts: readonly TemplatePart[], scope: Scope): string {
  let out = "";
  for (const part of parts) {
    switch (part.kind) {
      case "text":
        out += part.text;
        break;
      case "interpolation":
        out += interpolated(evaluate(part.expr, scope));
        break;
      case "if":
        out += renderParts(asBool(evaluate(part.condition, scope), "the %{if} condition: a bool") ? part.then : part.otherwise, scope);
        break;
      case "for":
        for (const [key, value] of iterate(evaluate(part.collection, scope))) {
          const names: Record<string, Value> = { [part.valueVar]: value };
          if (part.keyVar !== undefined) names[part.keyVar] = key;
          out += renderParts(part.body, withNames(scope, names));
        }
        break;
    }
  }
  return out;
}

/** A template's value: a lone `${expr}` keeps its value's type (HCL's rule); anything else is a string. */
export function evaluateTemplate(parts: readonly TemplatePart[], scope: Scope): Value {
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.kind === "interpolation") return evaluate(only.expr, scope);
  return renderParts(parts, scope);
}
