/**
 * JSON text kept with frozen objects: a frozen object never changes, so its
 * text is made once (or is the text it was parsed from) and a list of them
 * is only their texts joined (api/json-body.ts).
 * Object.freeze is shallow: the objects inside one are not frozen, and a
 * change made to them would not reach its text. Whoever freezes an object
 * here promises to replace it, never to change what it holds.
 */
const texts = new WeakMap<object, string>();

/** `value`'s JSON text, made once per frozen object; anything not frozen is serialized each time. */
export function jsonTextOf(value: unknown): string {
  if (typeof value !== "object" || value === null || !Object.isFrozen(value)) return JSON.stringify(value) ?? "null";
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}

/**
 * The object stored as `text` (a row written by JSON.stringify), frozen with
 * that text: answering it costs no second serialization.
 */
export function parsedWithText<T extends object>(text: string): T {
  const value = Object.freeze(JSON.parse(text) as T);
  texts.set(value, text);
  return value;
}
