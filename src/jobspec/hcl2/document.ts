/**
 * The job block of a parsed job file, evaluated: every string (template text,
 * as lib/hcl.ts hands it over) becomes its value, `dynamic` blocks become the
 * blocks they generate, and the result goes back into the same document
 * shape for hcl-job.ts. Strings in the result are template text again, so
 * that hcl-job.ts reads them as it reads a file written without
 * expressions: a `${` or `%{` that is text is escaped (`$${`, `%%{`) and a
 * reference left for the client (values.ts's KEPT_DOLLAR) is written `${...}`.
 */
import { iterate, withNames, type Scope } from "./expressions.ts";
import { evaluateDocumentValue } from "./variables.ts";
import { asList, asString, isObjectValue, KEPT_DOLLAR, type Value } from "./values.ts";

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isBlockList = (value: unknown): value is Json[] => Array.isArray(value) && value.length > 0 && value.every(isJson);
/** `group "web" {...}` arrives as {group: {web: [{...}]}}: an object whose every value is a block list. */
const isLabelled = (value: unknown): value is Record<string, unknown> =>
  isJson(value) && Object.keys(value).length > 0 && Object.values(value).every((item) => isBlockList(item) || isLabelled(item));

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const DYNAMIC_ATTRIBUTES = new Set(["for_each", "iterator", "labels", "content"]);

/** Text as the job document writes it: escaped, with kept references restored. */
function escapeText(text: string): string {
  // Replacer functions: in a replacement string "$$" would mean one "$".
  return text
    .replace(/\$\{/g, () => "$${")
    .replace(/%\{/g, () => "%%{")
    .replaceAll(KEPT_DOLLAR, () => "$");
}

function toDocument(value: Value): unknown {
  if (typeof value === "string") return escapeText(value);
  if (Array.isArray(value)) return value.map(toDocument);
  // Keys are not template text in the document (hcl-job.ts takes them as written).
  if (isObjectValue(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replaceAll(KEPT_DOLLAR, "$"), toDocument(item)]));
  return value;
}

const child = (path: string, key: string) => (IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`);
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class DocumentEvaluator {
  readonly problems: string[] = [];

  /** Each problem once: a dynamic block's content meets the same one for every element. */
  private problem(text: string): void {
    if (!this.problems.includes(text)) this.problems.push(text);
  }

  /** An attribute value or block list at `path`. */
  value(raw: unknown, path: string, scope: Scope): unknown {
    if (isBlockList(raw)) return raw.map((body, i) => this.body(body, raw.length > 1 ? `${path}[${i}]` : path, scope));
    if (isLabelled(raw)) {
      return Object.fromEntries(Object.entries(raw).map(([label, item]) => [label, this.value(item, `${path}[${JSON.stringify(label)}]`, scope)]));
    }
    // Attribute objects and lists are walked here so that a problem names the key or index it is at.
    if (isJson(raw)) return Object.fromEntries(Object.entries(raw).map(([key, item]) => [key, this.value(item, child(path, key), scope)]));
    if (Array.isArray(raw)) return raw.map((item, i) => this.value(item, `${path}[${i}]`, scope));
    try {
      return toDocument(evaluateDocumentValue(raw, scope));
    } catch (err) {
      this.problem(`${path}: ${message(err)}`);
      return null;
    }
  }

  /** A block's body: its attributes and blocks, with its `dynamic` blocks expanded in place. */
  body(raw: Json, path: string, scope: Scope): Json {
    const out: Json = {};
    for (const [key, item] of Object.entries(raw)) {
      if (key === "dynamic" && isLabelled(item)) continue;
      out[key] = this.value(item, child(path, key), scope);
    }
    if (isLabelled(raw.dynamic)) {
      for (const [type, specs] of Object.entries(raw.dynamic)) {
        const list = Array.isArray(specs) ? specs.filter(isJson) : [];
        list.forEach((spec, i) => this.dynamic(out, type, spec, `${path}.dynamic[${JSON.stringify(type)}]${list.length > 1 ? `[${i}]` : ""}`, scope));
      }
    }
    return out;
  }

  /** `dynamic "type" { for_each, iterator, labels, content {...} }`: one `type` block per element, added to `out`. */
  private dynamic(out: Json, type: string, spec: Json, path: string, scope: Scope): void {
    for (const key of Object.keys(spec)) if (!DYNAMIC_ATTRIBUTES.has(key)) this.problem(`${path}.${key}: unknown attribute`);
    const contents = Array.isArray(spec.content) ? spec.content.filter(isJson) : [];
    if (contents.length !== 1) {
      this.problem(`${path}: a dynamic block needs exactly one content block`);
      return;
    }
    let iterator = type;
    if (spec.iterator !== undefined) {
      const name = /^\$\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}$/.exec(String(spec.iterator))?.[1];
      if (name === undefined) {
        this.problem(`${path}.iterator: expected a name`);
        return;
      }
      iterator = name;
    }
    let pairs: [Value, Value][];
    try {
      pairs = iterate(evaluateDocumentValue(spec.for_each, scope));
    } catch (err) {
      this.problem(`${path}.for_each: ${spec.for_each === undefined ? "is required" : message(err)}`);
      return;
    }
    for (const [key, value] of pairs) {
      const inner = withNames(scope, { [iterator]: { key, value } });
      let labels: string[] = [];
      if (spec.labels !== undefined) {
        try {
          labels = asList(evaluateDocumentValue(spec.labels, inner), "labels: a list").map((label) => asString(label, "every label: a string"));
        } catch (err) {
          this.problem(`${path}.labels: ${message(err)}`);
          continue;
        }
      }
      const body = this.body(contents[0]!, `${path}.content`, inner);
      this.place(out, type, labels, body, path);
    }
  }

  /** Puts a generated block where the parser would have put a written one: under its type, then each label. */
  private place(out: Json, type: string, labels: readonly string[], body: Json, path: string): void {
    let holder: Json = out;
    let key = type;
    for (const label of labels) {
      const existing = holder[key];
      if (existing !== undefined && !isJson(existing)) {
        this.problem(`${path}: generates a labelled "${type}" block where unlabelled ones are written`);
        return;
      }
      const next: Json = existing ?? {};
      holder[key] = next;
      holder = next;
      key = label;
    }
    const existing = holder[key] ?? [];
    if (!Array.isArray(existing)) {
      this.problem(`${path}: generates an unlabelled "${type}" block where labelled ones are written`);
      return;
    }
    holder[key] = [...existing, body];
  }
}
