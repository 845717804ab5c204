/** Request bodies: JSON, or a 400 naming what is wrong with it. */
import type { Context } from "hono";
import { badRequest, ClientGoneError } from "./errors.ts";

/**
 * The JSON object body of a write request. An empty body is a 400, unless
 * the endpoint has a meaning for it (`whenEmpty`, as Nomad's client endpoints
 * take an empty body for "all defaults"). Every body Nomad's API takes is an
 * object, and valibot's object schemas accept an array (`[1,2]` would read as
 * a restart of every task with all defaults), so anything else is a 400 here.
 */
export async function jsonBody(c: Context, whenEmpty?: unknown): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    throw new ClientGoneError(`reading the request body failed: ${(err as Error).message}`);
  }
  if (text.trim() === "") {
    if (whenEmpty !== undefined) return whenEmpty;
    throw badRequest("request body is empty (expected JSON)");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw badRequest(`malformed JSON body: ${(err as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest(`request body must be a JSON object, not ${Array.isArray(body) ? "an array" : body === null ? "null" : `a ${typeof body}`}`);
  }
  return body;
}
