/** Request bodies: JSON, or a 400 naming what is wrong with it. */
import type { Context } from "hono";
import { badRequest } from "./errors.ts";

/**
 * The JSON body of a write request. An empty body is a 400, unless the
 * endpoint has a meaning for it (`whenEmpty`, as Nomad's client endpoints
 * take an empty body for "all defaults").
 */
export async function jsonBody(c: Context, whenEmpty?: unknown): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") {
    if (whenEmpty !== undefined) return whenEmpty;
    throw badRequest("request body is empty (expected JSON)");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`malformed JSON body: ${(err as Error).message}`);
  }
}
