/**
 * Response bodies of the lists the server answers over and over (blocking
 * queries wake on every change): a frozen element never changes, so its
 * JSON text is kept with it (lib/json-text.ts) and a list is only its
 * elements' texts joined. A list of a thousand allocs then costs the
 * serialization of those that changed, not of all of them; anything not
 * frozen is serialized as usual.
 */
import { jsonTextOf } from "../lib/json-text.ts";

/** `body` as JSON text, equal to JSON.stringify(body); only a list's elements are kept (a single object is read once). */
export function jsonText(body: unknown): string {
  if (!Array.isArray(body)) return JSON.stringify(body) ?? "null";
  return `[${body.map(jsonTextOf).join(",")}]`;
}
