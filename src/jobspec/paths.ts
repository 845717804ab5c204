/**
 * Where in a job a problem is, in the spelling of the document the operator
 * wrote: `job.group["web"].task["srv"].resources.memory` for an HCL file,
 * `Job.TaskGroups["web"].Tasks["srv"].Resources.MemoryMB` for API JSON.
 * Problems are found on the API JSON; this walks the job schemas to name
 * the HCL the value came from.
 */
import type * as v from "valibot";
import { JobSchema } from "../structs/job.ts";
import { describe, hclNameOf } from "../structs/schema-walk.ts";

export type PathStyle = "hcl" | "json";
export type PathSegment = string | number;

function child(node: unknown, key: PathSegment): unknown {
  return typeof node === "object" && node !== null ? (node as Record<PathSegment, unknown>)[key] : undefined;
}

function labelOf(item: unknown): string | undefined {
  const label = child(item, "Name") ?? child(item, "Label");
  return typeof label === "string" && label !== "" ? label : undefined;
}

/** The schema one step below `schema` along `segment`. */
function below(schema: v.GenericSchema | undefined, segment: PathSegment): v.GenericSchema | undefined {
  if (!schema) return undefined;
  const { shape } = describe(schema);
  if (shape.kind === "object" && typeof segment === "string") return shape.entries[segment];
  if (shape.kind === "array") return shape.item;
  if (shape.kind === "record") return shape.value;
  return undefined;
}

/** `segments` is a path inside the job object (not the {"Job": ...} wrapper). */
export function renderPath(style: PathStyle, job: unknown, segments: readonly PathSegment[]): string {
  let out = style === "hcl" ? "job" : "Job";
  let schema: v.GenericSchema | undefined = JobSchema;
  let node = job;
  for (const segment of segments) {
    const next = child(node, segment);
    const parentShape = schema && describe(schema).shape;
    const inner = below(schema, segment);
    const freeform = schema !== undefined && describe(schema).meta.freeform === true;
    if (typeof segment === "number" || (parentShape?.kind === "record" && !freeform)) {
      const label = typeof segment === "number" ? labelOf(next) : segment;
      out += label === undefined ? `[${segment}]` : `[${JSON.stringify(label)}]`;
    } else {
      // HCL writes both port lists as `port "label" {}` blocks.
      const ports = segment === "ReservedPorts" || segment === "DynamicPorts";
      const name = style === "hcl" && inner ? (hclNameOf(segment, inner) ?? (ports ? "port" : segment)) : segment;
      out += `.${name}`;
    }
    schema = inner;
    node = next;
  }
  return out;
}
