/**
 * Where in a job a problem is, in the spelling of the document the operator
 * wrote: `job.group["web"].task["srv"].resources.memory` for an HCL file,
 * `Job.TaskGroups["web"].Tasks["srv"].Resources.MemoryMB` for API JSON.
 * Problems are found on the API JSON; this walks the field tables to name
 * the HCL the value came from.
 */
import { childLevel, hclName, JOB, type Level } from "./fields.ts";

export type PathStyle = "hcl" | "json";
export type PathSegment = string | number;

function child(node: unknown, key: PathSegment): unknown {
  return typeof node === "object" && node !== null ? (node as Record<PathSegment, unknown>)[key] : undefined;
}

function labelOf(item: unknown): string | undefined {
  const label = child(item, "Name") ?? child(item, "Label");
  return typeof label === "string" && label !== "" ? label : undefined;
}

/** True when the HCL writes this list field as a single block (`network {}` for Networks). */
function isSingleBlockList(level: Level, json: string): boolean {
  return Object.values(level.fields).some((field) => field.json === json && field.kind === "block" && field.array === true);
}

/** `segments` is a path inside the job object (not the {"Job": ...} wrapper). */
export function renderPath(style: PathStyle, job: unknown, segments: readonly PathSegment[]): string {
  let out = style === "hcl" ? "job" : "Job";
  let level: Level | undefined = JOB;
  let node = job;
  let skipIndex = false;
  for (const segment of segments) {
    const next = child(node, segment);
    if (typeof segment === "number") {
      if (!skipIndex) {
        const label = labelOf(next);
        out += label === undefined ? `[${segment}]` : `["${label}"]`;
      }
      skipIndex = false;
      node = next;
      continue;
    }
    const nested: Level | undefined = level && childLevel(level, segment);
    const name = style === "hcl" && level ? (hclName(level, segment) ?? nested?.name ?? segment) : segment;
    out += `.${name}`;
    skipIndex = style === "hcl" && level !== undefined && isSingleBlockList(level, segment);
    level = nested;
    node = next;
  }
  return out;
}
