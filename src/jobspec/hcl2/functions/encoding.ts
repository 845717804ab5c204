/** Encoding functions: base64, URL, JSON, CSV and YAML, as Nomad's jobspec2 registers them. */
import { Buffer } from "node:buffer";
import { asString, HclEvalError, isObjectValue, numberToString, sortedKeys, type Value } from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";
import { yamlDecode } from "./yaml.ts";

const str = (args: readonly Value[], i: number) => asString(arg(args, i));

function base64decode(text: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new HclEvalError("the string is not valid base64");
  const bytes = Buffer.from(text, "base64");
  const decoded = new TextDecoder("utf-8", { fatal: true });
  try {
    return decoded.decode(bytes);
  } catch {
    throw new HclEvalError("the decoded bytes are not valid UTF-8");
  }
}

/** Go's url.QueryEscape: letters, digits and -_.~ stay, spaces become +, the rest %XX. */
function urlencode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+");
}

function jsonDecode(text: string): Value {
  try {
    return JSON.parse(text) as Value;
  } catch (err) {
    throw new HclEvalError(`invalid JSON: ${(err as Error).message}`);
  }
}

/** JSON as cty writes it: object keys sorted, no spaces. */
export function jsonEncode(value: Value): string {
  if (Array.isArray(value)) return `[${value.map(jsonEncode).join(",")}]`;
  if (isObjectValue(value)) return `{${sortedKeys(value).map((key) => `${JSON.stringify(key)}:${jsonEncode(value[key]!)}`).join(",")}}`;
  if (typeof value === "number") return numberToString(value);
  return JSON.stringify(value);
}

/** RFC 4180 rows. */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (quoted) throw new HclEvalError("the CSV has an unterminated quoted field");
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

function csvDecode(text: string): Value {
  const [header, ...rows] = csvRows(text);
  if (!header) throw new HclEvalError("the CSV has no header line");
  return rows.map((row, n) => {
    if (row.length !== header.length) throw new HclEvalError(`CSV line ${n + 2} has ${row.length} fields, the header ${header.length}`);
    return Object.fromEntries(header.map((name, i) => [name, row[i]!]));
  });
}

const YAML_PLAIN = /^[A-Za-z_/.][A-Za-z0-9_ ./-]*$/;
const YAML_RESERVED = /^(?:true|false|yes|no|on|off|null|y|n|~)$/i;

function yamlScalar(value: Value): string {
  if (value === null) return "null";
  if (typeof value === "number") return numberToString(value);
  if (typeof value === "boolean") return String(value);
  const text = String(value);
  // A block scalar; the caller indents its lines. "|" keeps one final newline, "|-" has none.
  if (text.includes("\n")) return text.endsWith("\n") ? `|\n${text.slice(0, -1)}` : `|-\n${text}`;
  return YAML_PLAIN.test(text) && !YAML_RESERVED.test(text) && !text.endsWith(" ") ? text : JSON.stringify(text);
}

const isEmptyCollection = (value: Value): boolean => (Array.isArray(value) ? value.length === 0 : isObjectValue(value) && Object.keys(value).length === 0);

/**
 * YAML as go-yaml (v2, which cty's yamlencode uses) writes it: keys sorted,
 * two-space mappings, a sequence under a key at the key's own indent, a
 * collection in a sequence item starting on the dash's line; ends with a newline.
 */
function yamlEncode(value: Value, indent = ""): string {
  if (Array.isArray(value) && value.length > 0) {
    return value.map((item) => `${indent}-${inline(item, `${indent}  `)}`).join("");
  }
  if (isObjectValue(value) && Object.keys(value).length > 0) {
    return sortedKeys(value)
      .map((key) => {
        const item = value[key]!;
        if (Array.isArray(item) && item.length > 0) return `${indent}${yamlScalar(key)}:\n${yamlEncode(item, indent)}`;
        if (isObjectValue(item) && !isEmptyCollection(item)) return `${indent}${yamlScalar(key)}:\n${yamlEncode(item, `${indent}  `)}`;
        return `${indent}${yamlScalar(key)}: ${leaf(item, `${indent}  `)}\n`;
      })
      .join("");
  }
  return `${indent}${leaf(value, `${indent}  `)}\n`;
}

/** A sequence item: a collection continues on the dash's line, a scalar follows it. */
function inline(item: Value, indent: string): string {
  if (!isEmptyCollection(item) && (Array.isArray(item) || isObjectValue(item))) return ` ${yamlEncode(item, indent).slice(indent.length)}`;
  return ` ${leaf(item, indent)}\n`;
}

function leaf(value: Value, indent: string): string {
  if (Array.isArray(value)) return "[]";
  if (isObjectValue(value)) return "{}";
  return yamlScalar(value).replace(/\n/g, `\n${indent}`);
}

export const encodingFunctions: FunctionTable = {
  base64decode: arity(1, 1, (args) => base64decode(str(args, 0))),
  base64encode: arity(1, 1, (args) => Buffer.from(str(args, 0), "utf8").toString("base64")),
  urlencode: arity(1, 1, (args) => urlencode(str(args, 0))),
  jsondecode: arity(1, 1, (args) => jsonDecode(str(args, 0))),
  jsonencode: arity(1, 1, (args) => jsonEncode(arg(args, 0))),
  csvdecode: arity(1, 1, (args) => csvDecode(str(args, 0))),
  yamldecode: arity(1, 1, (args) => yamlDecode(str(args, 0))),
  yamlencode: arity(1, 1, (args) => yamlEncode(arg(args, 0))),
};
