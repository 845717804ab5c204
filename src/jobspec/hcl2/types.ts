/**
 * A variable's `type` constraint (HCL's typeexpr: string, number, bool, any,
 * list(T), set(T), map(T), tuple([...]), object({...}) with optional(T, d)
 * attributes) and converting a value to it as cty's convert does: numbers
 * and bools to strings and back, tuples to lists, objects to maps, missing
 * optional attributes filled in.
 */
import { type Expr, parseExpression } from "./syntax.ts";
import {
  asBool,
  asNumber,
  asString,
  distinct,
  HclEvalError,
  isObjectValue,
  typeName,
  type ObjectValue,
  type Value,
} from "./values.ts";

export type TypeConstraint =
  | { kind: "string" | "number" | "bool" | "any" }
  | { kind: "list" | "set" | "map"; element: TypeConstraint }
  | { kind: "tuple"; elements: TypeConstraint[] }
  | { kind: "object"; attributes: Record<string, { type: TypeConstraint; optional: boolean; default?: Value }> };

const PRIMITIVES = ["string", "number", "bool", "any"] as const;

/** The constraint an expression such as `list(string)` writes (also convert()'s second argument). */
export function typeFromExpr(expr: Expr): TypeConstraint {
  if (expr.kind === "traversal" && expr.steps.length === 0) {
    const name = expr.root;
    if ((PRIMITIVES as readonly string[]).includes(name)) return { kind: name as (typeof PRIMITIVES)[number] };
    if (name === "list" || name === "set" || name === "map") return { kind: name, element: { kind: "any" } };
    throw new HclEvalError(`"${name}" is not a type (use string, number, bool, any, list(...), set(...), map(...), tuple([...]) or object({...}))`);
  }
  if (expr.kind !== "call") throw new HclEvalError("a type constraint must be a type name or a type constructor such as list(string)");
  const [arg] = expr.args;
  if (arg === undefined || expr.args.length !== 1) throw new HclEvalError(`${expr.name}(...) takes one argument`);
  switch (expr.name) {
    case "list":
    case "set":
    case "map":
      return { kind: expr.name, element: typeFromExpr(arg) };
    case "tuple":
      if (arg.kind !== "tuple") throw new HclEvalError("tuple(...) takes a list of types");
      return { kind: "tuple", elements: arg.items.map(typeFromExpr) };
    case "object": {
      if (arg.kind !== "object") throw new HclEvalError("object(...) takes an object of attribute types");
      const attributes: Extract<TypeConstraint, { kind: "object" }>["attributes"] = {};
      for (const item of arg.items) {
        if (item.key.kind !== "literal" || typeof item.key.value !== "string") {
          throw new HclEvalError("object(...) attribute names must be plain names");
        }
        attributes[item.key.value] = attributeType(item.value);
      }
      return { kind: "object", attributes };
    }
    default:
      throw new HclEvalError(`"${expr.name}" is not a type constructor`);
  }
}

function attributeType(expr: Expr): { type: TypeConstraint; optional: boolean; default?: Value } {
  if (expr.kind !== "call" || expr.name !== "optional") return { type: typeFromExpr(expr), optional: false };
  const [inner, fallback] = expr.args;
  if (inner === undefined || expr.args.length > 2) throw new HclEvalError("optional(...) takes a type and an optional default");
  const type = typeFromExpr(inner);
  if (fallback === undefined) return { type, optional: true };
  if (fallback.kind !== "literal") throw new HclEvalError("optional(...)'s default must be a literal value");
  return { type, optional: true, default: convert(fallback.value, type) };
}

/** The constraint written as `text` (the `type` attribute's expression). */
export function parseTypeConstraint(text: string): TypeConstraint {
  return typeFromExpr(parseExpression(text));
}

/** `value` as `type`, or an HclEvalError saying what does not fit. */
export function convert(value: Value, type: TypeConstraint): Value {
  if (value === null || type.kind === "any") return value;
  switch (type.kind) {
    case "string":
      if (typeof value === "object") throw new HclEvalError(`a string is required, got a ${typeName(value)}`);
      return asString(value);
    case "number":
      return asNumber(value);
    case "bool":
      return asBool(value);
    case "list":
    case "set": {
      if (!Array.isArray(value)) throw new HclEvalError(`a ${type.kind} is required, got a ${typeName(value)}`);
      const items = value.map((item, i) => element(() => convert(item, type.element), `[${i}]`));
      return type.kind === "set" ? distinct(items) : items;
    }
    case "map": {
      if (!isObjectValue(value)) throw new HclEvalError(`a map is required, got a ${typeName(value)}`);
      const out: ObjectValue = {};
      for (const [key, item] of Object.entries(value)) out[key] = element(() => convert(item, type.element), `["${key}"]`);
      return out;
    }
    case "tuple": {
      if (!Array.isArray(value)) throw new HclEvalError(`a tuple is required, got a ${typeName(value)}`);
      if (value.length !== type.elements.length) throw new HclEvalError(`a tuple of ${type.elements.length} elements is required, got ${value.length}`);
      return value.map((item, i) => element(() => convert(item, type.elements[i]!), `[${i}]`));
    }
    case "object": {
      if (!isObjectValue(value)) throw new HclEvalError(`an object is required, got a ${typeName(value)}`);
      const out: ObjectValue = {};
      for (const [name, attribute] of Object.entries(type.attributes)) {
        if (!(name in value) || value[name] === null) {
          if (!attribute.optional && !(name in value)) throw new HclEvalError(`attribute "${name}" is required`);
          out[name] = attribute.default ?? null;
          continue;
        }
        out[name] = element(() => convert(value[name]!, attribute.type), `.${name}`);
      }
      return out;
    }
  }
}

/** Prefixes an element's problem with where it is. */
function element(run: () => Value, where: string): Value {
  try {
    return run();
  } catch (err) {
    if (err instanceof HclEvalError) throw new HclEvalError(`${where}: ${err.message}`);
    throw err;
  }
}

/** Whether `-var` and NOMAD_VAR_ text is taken as is (string, number, no type) or parsed as an expression. */
export const takesLiteralText = (type: TypeConstraint | undefined): boolean =>
  type === undefined || type.kind === "string" || type.kind === "number";
