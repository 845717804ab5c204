/**
 * Reads the job schemas (src/structs/job.ts) as a grammar: for one schema,
 * what kind of value it takes once nullable and pipes are peeled off, and
 * the HCL spelling its metadata gives. The HCL reader and the error-path
 * renderer walk the same schemas the API JSON is parsed with, so a field is
 * added in one place; zeroFill also completes Nomad's Go values and rows
 * stored by a drover from before a field was added.
 */
import * as v from "valibot";
import type { HclMeta } from "./job.ts";

type Schema = v.GenericSchema;

export type Shape =
  | { kind: "object"; entries: Readonly<Record<string, Schema>> }
  | { kind: "array"; item: Schema }
  | { kind: "record"; value: Schema }
  | { kind: "string" | "number" | "boolean" | "picklist" | "unknown" };

export interface Described {
  shape: Shape;
  meta: HclMeta;
  nullable: boolean;
}

interface Wrapping {
  type: string;
  wrapped?: Schema;
  pipe?: readonly { kind: string; type: string; metadata?: { hcl?: HclMeta } }[];
  entries?: Record<string, Schema>;
  item?: Schema;
  value?: Schema;
}

export function describe(schema: Schema): Described {
  const meta: HclMeta = {};
  let nullable = false;
  let current = schema as unknown as Wrapping;
  const collect = (schema: Wrapping): void => {
    // A pipe's first item is the schema it extends, which may carry a pipe of its own.
    for (const item of schema.pipe ?? []) {
      if (item.kind === "schema" && item !== schema && "pipe" in item) collect(item as unknown as Wrapping);
      else if (item.kind === "metadata" && item.metadata?.hcl) Object.assign(meta, item.metadata.hcl);
    }
  };
  for (;;) {
    collect(current);
    if ((current.type === "nullable" || current.type === "optional") && current.wrapped) {
      nullable ||= current.type === "nullable";
      current = current.wrapped as unknown as Wrapping;
      continue;
    }
    // A custom check in front of a schema (common.ts's StringMap): the shape is the schema's.
    const checked = current.type === "custom" ? checkedSchema(current) : undefined;
    if (checked) {
      current = checked as unknown as Wrapping;
      continue;
    }
    break;
  }
  return { shape: shapeOf(current), meta, nullable };
}

/** The schema a custom check stands in front of: later in its pipe, or in the pipe it extends. */
function checkedSchema(schema: Wrapping): Wrapping | undefined {
  const [head, ...rest] = schema.pipe ?? [];
  const next = rest.find((item) => item.kind === "schema");
  if (next) return next as unknown as Wrapping;
  return head && head !== (schema as unknown) && "pipe" in head ? checkedSchema(head as unknown as Wrapping) : undefined;
}

function shapeOf(schema: Wrapping): Shape {
  switch (schema.type) {
    case "strict_object":
    case "object":
    case "loose_object":
      return { kind: "object", entries: schema.entries ?? {} };
    case "array":
      return { kind: "array", item: schema.item! };
    case "record":
      return { kind: "record", value: schema.value! };
    case "string":
    case "number":
    case "boolean":
    case "picklist":
      return { kind: schema.type };
    default:
      return { kind: "unknown" };
  }
}

/** "MinHealthyTime" -> "min_healthy_time", "GRPCUseTLS" -> "grpc_use_tls". */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

/** The HCL name of an object entry, or undefined for a JSON-only field. */
export function hclNameOf(key: string, schema: Schema): string | undefined {
  const { meta } = describe(schema);
  if (meta.jsonOnly) return undefined;
  return meta.hcl ?? snakeCase(key);
}

/** The object schema of `schema` itself, of its list items, or of its map values. */
export function objectBelow(schema: Schema): Readonly<Record<string, Schema>> | undefined {
  const { shape } = describe(schema);
  if (shape.kind === "object") return shape.entries;
  if (shape.kind === "array" || shape.kind === "record") {
    const inner = describe(shape.kind === "array" ? shape.item : shape.value).shape;
    return inner.kind === "object" ? inner.entries : undefined;
  }
  return undefined;
}

function zeroOf(schema: Schema): unknown {
  const { shape, nullable } = describe(schema);
  if (nullable) return null;
  switch (shape.kind) {
    case "object":
      return zeroFill(schema, {});
    case "array":
      return [];
    case "record":
      return {};
    case "string":
      return "";
    case "number":
      return 0;
    case "boolean":
      return false;
    default:
      return undefined;
  }
}

/**
 * `value` with every field its schema has and it lacks (or holds null where
 * the schema takes no null) set to Go's zero value, as Nomad's JSON carries
 * the fields it does not default: "", 0, false, [] and {}, and null for an
 * optional block. Values of the wrong type are left for the schema to name.
 */
export function zeroFill(schema: Schema, value: unknown): unknown {
  const { shape } = describe(schema);
  if (typeof value !== "object" || value === null) return value;
  if (shape.kind === "array" && Array.isArray(value)) return value.map((item) => zeroFill(shape.item, item));
  if (Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  if (shape.kind === "record") return Object.fromEntries(Object.entries(record).map(([key, item]) => [key, zeroFill(shape.value, item)]));
  if (shape.kind !== "object") return value;
  const out: Record<string, unknown> = { ...record };
  for (const [key, entry] of Object.entries(shape.entries)) {
    const current = out[key];
    const { nullable } = describe(entry);
    if (current === undefined || (current === null && !nullable)) {
      const zero = zeroOf(entry);
      if (zero !== undefined) out[key] = zero;
    } else out[key] = zeroFill(entry, current);
  }
  return out;
}
