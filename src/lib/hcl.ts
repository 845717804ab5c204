/**
 * HCL2 files (agent config, job files) through HashiCorp's own parser compiled
 * to WASM (@cdktf/hcl2json). Blocks come back as arrays of objects and
 * labelled blocks as maps of label to arrays; callers normalise that for their
 * own schema. The WASM module starts on first use (~140 ms), so it is loaded
 * lazily and only by commands that read HCL.
 */

/** A syntax error; the message carries file:line,col as HCL reports it. */
export class HclSyntaxError extends Error {
  override name = "HclSyntaxError";
}

export async function parseHcl(filename: string, text: string): Promise<Record<string, unknown>> {
  const { parse } = await import("@cdktf/hcl2json");
  try {
    return (await parse(filename, text)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // "parse config: [file:1,2-3: Summary; Detail.]" -> "file:1,2-3: Summary; Detail."
    const inner = /^parse config: \[(.*)\]$/s.exec(message)?.[1] ?? message;
    throw new HclSyntaxError(inner);
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
