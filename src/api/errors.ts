/** Errors a route throws on purpose; the app answers each with its message as plain text and its status. */
import type { ContentfulStatusCode } from "hono/utils/http-status";
import * as v from "valibot";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The request's body could not be read to its end: its client closed the
 * connection (Bun: a DOMException "The connection was closed."; Deno: a
 * BadResource error). Nobody is left to answer; the log says so in one line.
 */
export class ClientGoneError extends Error {
  override name = "ClientGoneError";
}

export const notFound = (what: string) => new ApiError(404, `${what} not found`);
export const badRequest = (message: string) => new ApiError(400, message);

/**
 * A request's query read by `schema`, or a 400 with its first problem, as
 * Nomad names one: "field: message", or the message alone for a field in
 * `bare` (Nomad's own wording, e.g. "must provide task name").
 */
export function parseQuery<S extends v.GenericSchema>(schema: S, query: Record<string, string>, bare: readonly string[] = []): v.InferOutput<S> {
  const parsed = v.safeParse(schema, query);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const field = v.getDotPath(issue);
  throw badRequest(field !== null && bare.includes(field) ? issue.message : `${field ?? "query"}: ${issue.message}`);
}
