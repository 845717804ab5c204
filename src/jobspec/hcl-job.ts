/**
 * An HCL2 job file, as HashiCorp's parser returns it, turned into Nomad's
 * API JSON for a job. The parser gives blocks as lists of bodies and
 * labelled blocks as maps of label to lists; this reads them against the
 * field tables (src/jobspec/fields.ts), so a block written twice, an
 * unknown name or a Nomad feature drover lacks is reported with its place
 * in the file rather than merged or dropped. Values are converted the way
 * HCL converts them for Nomad (numbers to strings in env, "30s" to
 * nanoseconds); the API-JSON checks (src/jobspec/api-job.ts) do the rest.
 */
import { parseDuration } from "../lib/duration.ts";
import { NS_PER_MS } from "../lib/units.ts";
import { blockContext, JOB, NETWORK, unsupportedMessage, type Field, type Level, type ValueKind } from "./fields.ts";
import { isExpression, keepReferences } from "./templates.ts";

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isBlockList = (value: unknown): value is Json[] => Array.isArray(value) && value.length > 0 && value.every(isObject);

/** Top-level HCL2 features Nomad has and drover does not. */
const TOP_LEVEL_UNSUPPORTED: Readonly<Record<string, string>> = {
  variable: 'the "variable" block is not supported by drover (job files are read without HCL2 variables)',
  variables: 'the "variables" block is not supported by drover (job files are read without HCL2 variables)',
  locals: 'the "locals" block is not supported by drover',
};

class HclReader {
  readonly problems: string[] = [];

  job(doc: Json): Json | undefined {
    let found: Json | undefined;
    for (const [key, raw] of Object.entries(doc)) {
      if (key !== "job") {
        this.problems.push(TOP_LEVEL_UNSUPPORTED[key] ?? `unknown top-level ${isBlockList(raw) || isObject(raw) ? "block" : "attribute"} "${key}"`);
        continue;
      }
      const labels = isObject(raw) ? Object.keys(raw) : [];
      if (labels.length !== 1 || !isObject(raw)) {
        this.problems.push(labels.length === 0 ? 'no job block: expected job "<name>" { ... }' : `one job per file (found ${labels.map((l) => `"${l}"`).join(", ")})`);
        continue;
      }
      const label = labels[0]!;
      found = this.labelled(JOB, "", "job", label, raw[label], "ID", "job")[0];
    }
    if (!found && this.problems.length === 0) this.problems.push('no job block: expected job "<name>" { ... }');
    return found;
  }

  private block(level: Level, body: unknown, context: string, path: string): Json {
    const out: Json = {};
    if (!isObject(body)) {
      this.problems.push(`${path}: expected a block`);
      return out;
    }
    for (const [key, raw] of Object.entries(body)) {
      const field = level.fields[key];
      if (!field) {
        const unsupported = level.unsupported.find((entry) => entry.hcl === key);
        if (unsupported) this.problems.push(unsupportedMessage(context, unsupported));
        else this.problems.push(`${context}: unknown ${isBlockList(raw) || isObject(raw) ? "block" : "attribute"} "${key}"`);
        continue;
      }
      if (raw === null) continue;
      out[field.json] = this.field(field, key, raw, context, `${path}.${key}`);
    }
    if (level === NETWORK) splitPorts(out);
    return out;
  }

  private field(field: Field, key: string, raw: unknown, context: string, path: string): unknown {
    switch (field.kind) {
      case "labelled": {
        if (!isObject(raw)) {
          this.problems.push(`${path}: expected ${key} "<label>" { ... } blocks`);
          return [];
        }
        return Object.entries(raw).flatMap(([label, bodies]) => this.labelled(field.level, context, path, label, bodies, field.labelKey));
      }
      case "block": {
        const bodies = isObject(raw) ? [raw] : raw;
        if (!isBlockList(bodies)) {
          this.problems.push(`${path}: expected a ${key} { ... } block`);
          return undefined;
        }
        if (bodies.length > 1) this.problems.push(`${context}: only one "${key}" block is allowed (found ${bodies.length})`);
        const body = this.block(field.level, bodies[0], blockContext(context, field.level), path);
        return field.array ? [body] : body;
      }
      case "map":
        return this.map(raw, path);
      default:
        return this.scalar(field.kind, raw, path);
    }
  }

  private labelled(level: Level, context: string, path: string, label: string, bodies: unknown, labelKey: string, at = `${path}["${label}"]`): Json[] {
    if (!isBlockList(bodies)) {
      this.problems.push(`${at}: expected a block`);
      return [];
    }
    const ctx = blockContext(context, level, label);
    if (bodies.length > 1) this.problems.push(`${ctx} is defined ${bodies.length} times`);
    return [{ [labelKey]: label, ...this.block(level, bodies[0], ctx, at) }];
  }

  /** env and meta: written as a block or as a map attribute; values become strings. */
  private map(raw: unknown, path: string): Record<string, string> {
    const parts = isObject(raw) ? [raw] : isBlockList(raw) ? raw : undefined;
    if (!parts) {
      this.problems.push(`${path}: expected a block of NAME = "value" lines`);
      return {};
    }
    const out: Record<string, string> = {};
    for (const part of parts) {
      for (const [name, value] of Object.entries(part)) {
        const text = this.scalar("string", value, `${path}.${name}`);
        if (typeof text === "string") out[name] = text;
      }
    }
    return out;
  }

  /** One value converted as HCL converts it for the field's type; anything else is left for the schema to name. */
  private scalar(kind: ValueKind, raw: unknown, path: string): unknown {
    if (typeof raw === "string" && kind !== "string" && kind !== "strings" && isExpression(raw)) {
      this.problems.push(`${path}: expressions are not supported by drover here (got "${raw}"); write a literal value`);
      return undefined;
    }
    switch (kind) {
      case "string":
        return this.text(raw, path);
      case "strings":
        return Array.isArray(raw) ? raw.map((item, i) => this.text(item, `${path}[${i}]`)) : raw;
      case "int":
        return typeof raw === "string" && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
      case "bool":
        return raw === "true" ? true : raw === "false" ? false : raw;
      case "duration":
        return this.duration(raw, path);
      case "map":
        return this.map(raw, path);
    }
  }

  private text(raw: unknown, path: string): unknown {
    if (typeof raw === "number" || typeof raw === "boolean") return String(raw);
    if (typeof raw !== "string") {
      if (isObject(raw) || Array.isArray(raw)) this.problems.push(`${path}: expected a string`);
      return raw;
    }
    const kept = keepReferences(raw);
    if ("problem" in kept) {
      this.problems.push(`${path}: ${kept.problem}`);
      return raw;
    }
    return kept.value;
  }

  private duration(raw: unknown, path: string): number | undefined {
    if (typeof raw !== "string") {
      this.problems.push(`${path}: expected a duration such as "30s" or "1m30s"`);
      return undefined;
    }
    try {
      return Math.round(parseDuration(raw) * NS_PER_MS);
    } catch (err) {
      this.problems.push(`${path}: ${(err as Error).message}`);
      return undefined;
    }
  }
}

/** `port "x" { static = N }` reserves N; `port "x" {}` asks placement for a dynamic port. */
function splitPorts(network: Json): void {
  const ports = Array.isArray(network.Ports) ? (network.Ports as Json[]) : [];
  delete network.Ports;
  network.ReservedPorts = ports.filter((port) => port.Value !== undefined);
  network.DynamicPorts = ports.filter((port) => port.Value === undefined);
}

/** The API-JSON job in an hcl2json document (undefined when it has none), and every problem found reading it. */
export function jobFromHclDocument(doc: Record<string, unknown>): { job: Record<string, unknown> | undefined; problems: string[] } {
  const reader = new HclReader();
  const job = reader.job(doc);
  return { job, problems: reader.problems };
}
