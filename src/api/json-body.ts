/**
 * Response bodies of the lists the server answers over and over (blocking
 * queries wake on every change): a frozen element never changes, so its
 * JSON text is kept with it and a list is only its elements' texts joined.
 * A list of a thousand allocs then costs the serialization of those that
 * changed, not of all of them; anything not frozen is serialized as usual.
 */
const texts = new WeakMap<object, string>();

function elementText(element: unknown): string {
  if (typeof element !== "object" || element === null || !Object.isFrozen(element)) return JSON.stringify(element) ?? "null";
  let text = texts.get(element);
  if (text === undefined) {
    text = JSON.stringify(element);
    texts.set(element, text);
  }
  return text;
}

/** `body` as JSON text, equal to JSON.stringify(body); only a list's elements are kept (a single object is read once). */
export function jsonText(body: unknown): string {
  if (!Array.isArray(body)) return JSON.stringify(body) ?? "null";
  return `[${body.map(elementText).join(",")}]`;
}
