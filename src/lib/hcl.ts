/**
 * HCL2 files (agent config, job files) through HashiCorp's own parser compiled
 * to WASM (src/lib/hcl-parser.ts). Blocks come back as arrays of objects and
 * labelled blocks as maps of label to arrays; callers normalise that for their
 * own schema. The parser starts on first use (~140 ms), so it is loaded
 * lazily and only by commands that read HCL.
 */
import { ValidationError, type SourcePosition } from "./validation.ts";

/**
 * A syntax error: one problem per diagnostic HCL gave, each placed at the
 * line and column where its range starts.
 */
export class HclSyntaxError extends ValidationError {
  override name = "HclSyntaxError";
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * "parse config: [f.hcl:1,5-2,1: Summary; Detail. f.hcl:3,1-4: ...]" -> an
 * HclSyntaxError with a problem and a position per diagnostic.
 */
function syntaxError(filename: string, message: string): HclSyntaxError {
  const inner = /^parse config: \[(.*)\]$/s.exec(message)?.[1] ?? message;
  const start = new RegExp(`(?:^|\\s)${escapeRegExp(filename)}:(\\d+),(\\d+)(?:-\\d+(?:,\\d+)?)?: `, "g");
  const marks = [...inner.matchAll(start)];
  if (marks.length === 0) return new HclSyntaxError(filename, [inner.trim()]);
  const problems: string[] = [];
  const positions: SourcePosition[] = [];
  marks.forEach((mark, i) => {
    const end = marks[i + 1]?.index ?? inner.length;
    problems.push(inner.slice(mark.index + mark[0].length, end).trim());
    positions.push({ line: Number(mark[1]), column: Number(mark[2]) });
  });
  return new HclSyntaxError(filename, problems, positions);
}

/** Control characters other than tab and line ends: never part of a config or job file. */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;

/** The first control character in `text`, as an error at its line and column. */
function controlCharacterError(filename: string, text: string): HclSyntaxError | undefined {
  const match = CONTROL.exec(text);
  if (!match) return undefined;
  const before = text.slice(0, match.index);
  const line = before.split("\n").length;
  const column = match.index - before.lastIndexOf("\n");
  const code = match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
  return new HclSyntaxError(filename, [`control character U+${code} is not allowed in the file`], [{ line, column }]);
}

export async function parseHcl(filename: string, text: string): Promise<Record<string, unknown>> {
  const control = controlCharacterError(filename, text);
  if (control) throw control;
  const { hclParser } = await import("./hcl-parser.ts");
  const parse = await hclParser();
  let json: string;
  try {
    json = await parse(filename, text);
  } catch (err) {
    // The parser's own failures are errors; HCL's diagnostics come as a string.
    if (err instanceof Error) throw err;
    throw syntaxError(filename, String(err));
  }
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    // The parser writes an escape such as "\u0000" in a block label back raw, which is not JSON.
    throw new HclSyntaxError(filename, ["a block label holds a control character (written as an escape sequence)"]);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Deep-merges `b` into `a`: objects merge key by key, anything else in `b`
 * replaces what `a` had. Neither input is modified.
 */
export function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * For documents with no list-of-object attributes (the agent config): every
 * array of objects is a block written once or more, merged into one object.
 */
export function collapseBlocks(value: unknown): unknown {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isPlainObject)) {
      return value.map((item) => collapseBlocks(item) as Record<string, unknown>).reduce(deepMerge, {});
    }
    return value.map(collapseBlocks);
  }
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, collapseBlocks(item)]));
  }
  return value;
}
