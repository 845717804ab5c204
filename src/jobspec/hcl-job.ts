/**
 * An HCL2 job file, as HashiCorp's parser returns it, turned into Nomad's
 * API JSON for a job. The parser gives blocks as lists of bodies and
 * labelled blocks as maps of label to lists; this reads them against the
 * job schemas (src/structs/job.ts, through src/structs/schema-walk.ts), so
 * every block of Nomad's jobspec is read and kept, and a block written twice
 * where Nomad allows one, or a name Nomad does not have, is reported with
 * its place in the file rather than merged or dropped. Values are converted
 * the way Nomad's parser converts them ("30s" to nanoseconds, "100" to 100,
 * numbers to strings in env); the API-JSON checks (src/jobspec/api-job.ts)
 * do the rest. What drover cannot run is not decided here.
 */
import * as v from "valibot";
import { parseDuration } from "../lib/duration.ts";
import { NS_PER_MS } from "../lib/units.ts";
import {
  AffinitySchema,
  ConstraintSchema,
  DEFAULT_IDENTITY,
  HORIZONTAL_SCALING,
  JobSchema,
  NetworkResourceSchema,
  ScalingPolicySchema,
  SpreadSchema,
  TASK_SCALING_TYPES,
  TaskGroupSchema,
  TaskSchema,
} from "../structs/job.ts";
import { describe, hclNameOf } from "../structs/schema-walk.ts";
import { isExpression, keepReferences } from "./templates.ts";

type Json = Record<string, unknown>;
type Entries = Readonly<Record<string, v.GenericSchema>>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isBlockList = (value: unknown): value is Json[] => Array.isArray(value) && value.length > 0 && value.every(isObject);

/** Top-level HCL2 features Nomad has and drover does not. */
const TOP_LEVEL_UNSUPPORTED: Readonly<Record<string, string>> = {
  variable: 'variable: the "variable" block is not supported by drover (job files are read without HCL2 variables)',
  variables: 'variables: the "variables" block is not supported by drover (job files are read without HCL2 variables)',
  locals: 'locals: the "locals" block is not supported by drover',
};

/** Constraint and affinity attributes that name their operand (Nomad's jobspec shorthand). */
const OPERAND_ATTRIBUTES = ["version", "semver", "regexp", "set_contains", "set_contains_any", "set_contains_all"] as const;

class HclReader {
  readonly problems: string[] = [];

  /** `source`, the file's text, puts labelled blocks back in file order (the parser sorts them by label). */
  constructor(private readonly source = "") {}

  /** `labels` in the order `key "label"` first appears in the file. */
  private inFileOrder(key: string, labels: string[]): string[] {
    const at = (label: string) => {
      const escaped = JSON.stringify(label).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const found = new RegExp(`(?:^|[\\s{])${key}\\s+${escaped}`, "m").exec(this.source);
      return found ? found.index : Number.MAX_SAFE_INTEGER;
    };
    return labels.map((label) => ({ label, index: at(label) })).sort((a, b) => a.index - b.index).map((entry) => entry.label);
  }

  job(doc: Json): Json | undefined {
    let found: Json | undefined;
    for (const [key, raw] of Object.entries(doc)) {
      if (key !== "job") {
        this.problems.push(TOP_LEVEL_UNSUPPORTED[key] ?? `${key}: unknown top-level ${isBlockList(raw) || isObject(raw) ? "block" : "attribute"}`);
        continue;
      }
      const labels = isObject(raw) ? Object.keys(raw) : [];
      if (labels.length !== 1 || !isObject(raw)) {
        this.problems.push(labels.length === 0 ? 'no job block: expected job "<name>" { ... }' : `job["${labels[1]}"]: one job per file (found ${labels.map((l) => `"${l}"`).join(", ")})`);
        continue;
      }
      const label = labels[0]!;
      const bodies = raw[label];
      if (!isBlockList(bodies)) {
        this.problems.push(`job["${label}"]: expected a block`);
        continue;
      }
      // The job's own label is left out of every path, as src/jobspec/paths.ts does.
      const path = "job";
      if (bodies.length > 1) this.problems.push(`${path}: defined ${bodies.length} times`);
      const { task: outsideTasks, vault, ...body } = bodies[0]!;
      found = { ID: label, Name: label, ...this.object(JobSchema.entries, body, path) };
      // Nomad's parser puts the groups it makes of outside tasks first.
      if (outsideTasks !== undefined) found.TaskGroups = [...this.outsideTasks(outsideTasks, path), ...((found.TaskGroups as Json[] | undefined) ?? [])];
      this.inheritVault(found, vault, path);
    }
    if (!found && this.problems.length === 0) this.problems.push('no job block: expected job "<name>" { ... }');
    return found;
  }

  /** Nomad's jobspec lets a task stand outside a group: each becomes a group of its own name. */
  private outsideTasks(raw: unknown, path: string): Json[] {
    const groupEntries = objectEntries(JobSchema.entries.TaskGroups);
    const taskEntries = groupEntries && objectEntries(groupEntries.Tasks!);
    if (!taskEntries) return [];
    return this.labelled(taskEntries, "task", raw, `${path}.task`).map(([label, task]) => ({ Name: label, Tasks: [task] }));
  }

  /**
   * Nomad's jobspec takes `vault` on a job or a group too: it is the default
   * of every task below that has none of its own.
   */
  private inheritVault(job: Json, raw: unknown, path: string): void {
    const tasks = objectEntries(TaskGroupSchema.entries.Tasks);
    const vault = tasks && describe(tasks.Vault!).shape;
    if (!vault || vault.kind !== "object") return;
    const jobVault = raw === undefined ? undefined : this.single(vault.entries, "vault", raw, `${path}.vault`);
    for (const group of (job.TaskGroups as Json[] | undefined) ?? []) {
      const own = group.Vault as Json | undefined;
      delete group.Vault;
      const inherited = own ?? jobVault;
      if (inherited) for (const task of (group.Tasks as Json[] | undefined) ?? []) task.Vault ??= inherited;
    }
  }

  /** One block's body read against an object schema's entries. */
  object(entries: Entries, body: Json, path: string, label?: string): Json {
    if (entries === ConstraintSchema.entries || entries === AffinitySchema.entries) return this.constraint(entries, body, path);
    if (entries === SpreadSchema.entries) return this.spread(body, path);
    const out: Json = label === undefined ? {} : { Name: label };
    const ports = entries === NetworkResourceSchema.entries ? body.port : undefined;
    for (const [key, raw] of Object.entries(body)) {
      if (ports !== undefined && key === "port") continue;
      if (key === "vault" && entries === TaskGroupSchema.entries) {
        // Held under Vault until inheritVault hands it to the group's tasks.
        const vault = describe(objectEntries(entries.Tasks!)!.Vault!).shape;
        if (vault.kind === "object") out.Vault = this.single(vault.entries, key, raw, `${path}.${key}`);
        continue;
      }
      const found = Object.entries(entries).find(([json, schema]) => hclNameOf(json, schema) === key);
      if (!found) {
        this.problems.push(`${path}.${key}: unknown ${isBlockList(raw) || isObject(raw) ? "block" : "attribute"}`);
        continue;
      }
      if (raw === null) continue;
      if (entries === TaskSchema.entries && key === "scaling") {
        out.ScalingPolicies = this.taskScaling(raw, `${path}.${key}`);
        continue;
      }
      const [json, schema] = found;
      const value = this.value(schema, describe(schema).meta, key, raw, `${path}.${key}`);
      if (value !== undefined) out[json] = value;
      if (entries === TaskGroupSchema.entries && key === "scaling" && isObject(value)) {
        if (value.Max === undefined) this.problems.push(`${path}.scaling: missing "max"`);
        // A group's policy scales its count; the vertical kinds are a task's (`scaling "cpu"`).
        if (value.Type !== undefined && value.Type !== HORIZONTAL_SCALING) {
          this.problems.push(`${path}.scaling.type: task group scaling policy had invalid type: "${String(value.Type)}"`);
        }
      }
    }
    if (ports !== undefined) Object.assign(out, this.ports(ports, `${path}.port`));
    if (entries === TaskSchema.entries) defaultIdentity(out);
    return out;
  }

  /** `scaling "cpu" {}` and `scaling "mem" {}`, each at most once, as Nomad 1.x's jobspec reads them. */
  private taskScaling(raw: unknown, path: string): Json[] {
    return this.labelled(ScalingPolicySchema.entries, "scaling", raw, path, false).flatMap(([label, policy]) => {
      const type = TASK_SCALING_TYPES[label.toLowerCase()];
      const at = `${path}["${label}"]`;
      if (type === undefined) {
        this.problems.push(`${at}: scaling policy name must be "cpu" or "mem"`);
        return [];
      }
      if (policy.Type !== undefined && policy.Type !== type) {
        this.problems.push(`${at}.type: expected "${type}" for a "${label}" policy, got "${String(policy.Type)}"`);
        return [];
      }
      return [{ ...policy, Type: type }];
    });
  }

  private value(schema: v.GenericSchema, meta: { label?: string; duration?: true; freeform?: true }, key: string, raw: unknown, path: string): unknown {
    const { shape } = describe(schema);
    if (meta.duration) return this.duration(raw, path);
    if (meta.freeform) {
      if (isBlockList(raw) && raw.length > 1) this.problems.push(`${path}[1]: only one "${key}" block is allowed (found ${raw.length})`);
      return this.freeform(raw, path);
    }
    switch (shape.kind) {
      case "object":
        return this.single(shape.entries, key, raw, path);
      case "array": {
        const item = describe(shape.item).shape;
        if (item.kind !== "object") return this.list(raw, path, item.kind === "number");
        if (meta.label) return this.labelled(item.entries, key, raw, path).map(([, body]) => body);
        return this.blocks(item.entries, key, raw, path);
      }
      case "record": {
        const value = describe(shape.value).shape;
        if (value.kind === "object") {
          return Object.fromEntries(this.labelled(value.entries, key, raw, path, meta.label !== undefined));
        }
        return value.kind === "array" ? this.mergedMap(raw, path) : this.map(raw, path);
      }
      case "number":
        return this.number(raw, path);
      case "boolean":
        return this.bool(raw, path);
      default:
        return this.text(raw, path);
    }
  }

  /** A block Nomad allows once. */
  private single(entries: Entries, key: string, raw: unknown, path: string): Json | undefined {
    const bodies = isObject(raw) ? [raw] : raw;
    if (!isBlockList(bodies)) {
      this.problems.push(`${path}: expected a ${key} { ... } block`);
      return undefined;
    }
    if (bodies.length > 1) this.problems.push(`${path}[1]: only one "${key}" block is allowed (found ${bodies.length})`);
    return this.object(entries, bodies[0]!, path);
  }

  /** Blocks that may repeat (`service {}`, `artifact {}`). */
  private blocks(entries: Entries, key: string, raw: unknown, path: string): Json[] {
    const bodies = isObject(raw) ? [raw] : raw;
    if (!isBlockList(bodies)) {
      this.problems.push(`${path}: expected ${key} { ... } blocks`);
      return [];
    }
    if (key === "network" && bodies.length > 1) this.problems.push(`${path}[1]: only one "network" block is allowed (found ${bodies.length})`);
    return bodies.map((body, i) => this.object(entries, body, bodies.length > 1 ? `${path}[${i}]` : path));
  }

  /** `task "web" {}`: [label, body] pairs in file order; the label goes under Name unless `keyed` (a map's key only). */
  private labelled(entries: Entries, key: string, raw: unknown, path: string, named = true): [string, Json][] {
    if (!isObject(raw)) {
      this.problems.push(`${path}: expected ${key} "<label>" { ... } blocks`);
      return [];
    }
    return this.inFileOrder(key, Object.keys(raw)).flatMap((label): [string, Json][] => {
      const bodies = raw[label];
      const at = `${path}["${label}"]`;
      if (!isBlockList(bodies)) {
        // `scaling "cpu" "mem" {}`: the parser nests the second label as a map.
        const extra = isObject(bodies) ? Object.keys(bodies)[0] : undefined;
        this.problems.push(extra === undefined ? `${at}: expected a block` : `${at}: one label expected, found another ("${extra}")`);
        return [];
      }
      if (bodies.length > 1) this.problems.push(`${at}: defined ${bodies.length} times`);
      return [[label, this.object(entries, bodies[0]!, at, named ? label : undefined)]];
    });
  }

  /** env and meta: written as a block or as a map attribute; values become strings. */
  private map(raw: unknown, path: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.mergedMap(raw, path))) {
      const text = this.text(value, `${path}.${name}`);
      if (typeof text === "string") out[name] = text;
    }
    return out;
  }

  /** A map written as one block, several, or an attribute; values as written (a check's header lists). */
  private mergedMap(raw: unknown, path: string): Json {
    const parts = isObject(raw) ? [raw] : isBlockList(raw) ? raw : undefined;
    if (!parts) {
      this.problems.push(`${path}: expected a block of NAME = value lines`);
      return {};
    }
    return Object.assign({}, ...parts) as Json;
  }

  /** A list attribute: strings, or numbers where the schema takes numbers (transparent_proxy's ports). */
  private list(raw: unknown, path: string, numbers = false): unknown {
    if (!Array.isArray(raw)) return raw;
    return raw.map((item, i) => (numbers ? this.number(item, `${path}[${i}]`) : this.text(item, `${path}[${i}]`)));
  }

  /** A driver's config and the like: kept as written, with `$${` unescaped in its strings. */
  private freeform(raw: unknown, path: string): unknown {
    const value = isBlockList(raw) && raw.length === 1 ? raw[0] : raw;
    if (typeof value === "string") return this.text(value, path);
    if (Array.isArray(value)) return value.map((item, i) => this.freeform(item, `${path}[${i}]`));
    if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.freeformItem(item, `${path}.${key}`)]));
    return value;
  }

  /**
   * Below the top of a free-form block, nested blocks stay lists (Nomad's
   * `port_map = [{...}]`), labelled ones too (`check "x" {}` is
   * `check = [{x = [{...}]}]`), as Nomad's parser gives them.
   */
  private freeformItem(raw: unknown, path: string): unknown {
    if (typeof raw === "string") return this.text(raw, path);
    if (isObject(raw) && Object.keys(raw).length > 0 && Object.values(raw).every(isBlockList)) {
      return [Object.fromEntries(Object.entries(raw).map(([key, item]) => [key, this.freeformItem(item, `${path}.${key}`)]))];
    }
    if (Array.isArray(raw)) return raw.map((item, i) => this.freeformItem(item, `${path}[${i}]`));
    if (isObject(raw)) return Object.fromEntries(Object.entries(raw).map(([key, item]) => [key, this.freeformItem(item, `${path}.${key}`)]));
    return raw;
  }

  private expression(raw: unknown, path: string): boolean {
    if (typeof raw === "string" && isExpression(raw)) {
      this.problems.push(`${path}: expressions are not supported by drover here (got "${raw}"); write a literal value`);
      return true;
    }
    return false;
  }

  private number(raw: unknown, path: string): unknown {
    if (this.expression(raw, path)) return undefined;
    return typeof raw === "string" && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
  }

  private bool(raw: unknown, path: string): unknown {
    if (this.expression(raw, path)) return undefined;
    return raw === "true" ? true : raw === "false" ? false : raw;
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
    if (typeof raw === "number" && Number.isInteger(raw) && raw >= 0) return raw;
    if (typeof raw !== "string" || this.expression(raw, path)) {
      if (typeof raw !== "string") this.problems.push(`${path}: expected a duration such as "30s" or "1m30s"`);
      return undefined;
    }
    try {
      return Math.round(parseDuration(raw) * NS_PER_MS);
    } catch (err) {
      this.problems.push(`${path}: ${(err as Error).message}`);
      return undefined;
    }
  }

  /** `constraint { attribute operator value }`, or the shorthands (`version = "..."`, `distinct_hosts = true`). */
  private constraint(entries: Entries, body: Json, path: string): Json {
    const affinity = entries === AffinitySchema.entries;
    const known = ["attribute", "operator", "value", ...OPERAND_ATTRIBUTES, ...(affinity ? ["weight"] : ["distinct_hosts", "distinct_property"])];
    for (const key of Object.keys(body)) {
      if (!known.includes(key)) this.problems.push(`${path}.${key}: unknown attribute`);
    }
    const text = (key: string) => (body[key] === undefined ? "" : (this.text(body[key], `${path}.${key}`) as string));
    const out: Json = { LTarget: text("attribute"), RTarget: text("value"), Operand: body.operator === undefined ? "=" : text("operator") };
    for (const key of OPERAND_ATTRIBUTES) {
      if (body[key] !== undefined) Object.assign(out, { Operand: key, RTarget: text(key) });
    }
    if (!affinity && body.distinct_hosts !== undefined && this.bool(body.distinct_hosts, `${path}.distinct_hosts`) === true) {
      Object.assign(out, { Operand: "distinct_hosts", LTarget: "", RTarget: "" });
    }
    if (!affinity && body.distinct_property !== undefined) Object.assign(out, { Operand: "distinct_property", LTarget: text("distinct_property") });
    if (affinity && body.weight !== undefined) out.Weight = this.number(body.weight, `${path}.weight`);
    return out;
  }

  /** `spread { attribute weight target "label" { percent } }`. */
  private spread(body: Json, path: string): Json {
    const out: Json = { Attribute: "", SpreadTarget: [] };
    for (const [key, raw] of Object.entries(body)) {
      if (key === "attribute") out.Attribute = this.text(raw, `${path}.attribute`);
      else if (key === "weight") out.Weight = this.number(raw, `${path}.weight`);
      else if (key === "target" && isObject(raw)) {
        out.SpreadTarget = Object.entries(raw).map(([label, bodies]) => {
          const target = isBlockList(bodies) ? bodies[0]! : {};
          for (const extra of Object.keys(target).filter((name) => name !== "percent")) this.problems.push(`${path}.target["${label}"].${extra}: unknown attribute`);
          return { Value: label, Percent: target.percent === undefined ? 0 : this.number(target.percent, `${path}.target["${label}"].percent`) };
        });
      } else this.problems.push(`${path}.${key}: unknown ${isBlockList(raw) ? "block" : "attribute"}`);
    }
    return out;
  }

  /** `port "x" { static = N }` reserves N; `port "x" {}` asks placement for a dynamic port. */
  private ports(raw: unknown, path: string): Json {
    const port = describe(NetworkResourceSchema.entries.ReservedPorts).shape;
    if (port.kind !== "array") return {};
    const item = describe(port.item).shape;
    if (item.kind !== "object") return {};
    const all = this.labelled(item.entries, "port", raw, path).map(([label, body]): Json => {
      const { Name: _, ...rest } = body;
      return { Label: label, ...rest };
    });
    // Labels name NOMAD_PORT_<label> variables, which Nomad's parser compares regardless of case.
    const lower = all.map((p) => String(p.Label).toLowerCase());
    for (const label of new Set(lower.filter((label, i) => lower.indexOf(label) !== i))) {
      this.problems.push(`${path}: found a port label collision: "${label}" is used more than once (labels are compared regardless of case)`);
    }
    return { ReservedPorts: all.filter((p) => p.Value !== undefined), DynamicPorts: all.filter((p) => p.Value === undefined) };
  }
}

/**
 * Nomad 1.7+'s jobspec: the identity without a name (or named "default") is
 * the task's default Identity; the others stay in Identities.
 */
function defaultIdentity(task: Json): void {
  const identities = Array.isArray(task.Identities) ? (task.Identities as Json[]) : [];
  const index = identities.findIndex((identity) => identity.Name === undefined || identity.Name === "" || identity.Name === DEFAULT_IDENTITY);
  if (index < 0) return;
  task.Identity = identities[index];
  task.Identities = identities.filter((_, i) => i !== index);
}

function objectEntries(schema: v.GenericSchema): Entries | undefined {
  const shape = describe(schema).shape;
  if (shape.kind !== "array") return undefined;
  const item = describe(shape.item).shape;
  return item.kind === "object" ? item.entries : undefined;
}

/** The API-JSON job in an hcl2json document (undefined when it has none), and every problem found reading it. */
export function jobFromHclDocument(doc: Record<string, unknown>, source = ""): { job: Record<string, unknown> | undefined; problems: string[] } {
  const reader = new HclReader(source);
  const job = reader.job(doc);
  return { job, problems: reader.problems };
}
