/**
 * Requests to the agent's public HTTP API, as any Nomad client makes them:
 * the token in X-Nomad-Token, errors as Nomad's plain-text body with the
 * status. Answers are checked against the shapes the UI reads.
 */
import * as v from "valibot";
import { readToken } from "../acl/token.ts";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  /** Nomad's answer to a token that may not do this. */
  get denied(): boolean {
    return this.status === 403;
  }
}

export interface RequestOptions {
  method?: "GET" | "POST" | "PUT" | "DELETE";
  body?: unknown;
  signal?: AbortSignal;
}

export function authHeaders(): Record<string, string> {
  const token = readToken();
  return token ? { "X-Nomad-Token": token } : {};
}

/** `path` asked of `namespace` (Nomad's `?namespace=`; "*" for every one the token may see). */
export function inNamespace(path: string, namespace: string): string {
  return `${path}${path.includes("?") ? "&" : "?"}namespace=${encodeURIComponent(namespace)}`;
}

/** The response of `path`, or an ApiError carrying the agent's message. */
export async function send(path: string, options: RequestOptions = {}): Promise<Response> {
  const response = await fetch(path, {
    method: options.method ?? "GET",
    headers: { ...authHeaders(), ...(options.body === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!response.ok) {
    const message = (await response.text()).trim() || response.statusText;
    throw new ApiError(response.status, message);
  }
  return response;
}

/** An answer the UI cannot read: named by the path in the answer, so a mismatch says where. */
export function parseAnswer<T extends v.GenericSchema>(schema: T, path: string, json: unknown): v.InferOutput<T> {
  const parsed = v.safeParse(schema, json);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  throw new ApiError(0, `unexpected answer from ${path} at ${v.getDotPath(issue) ?? "the top"}: ${issue.message}`);
}

export async function getJson<T extends v.GenericSchema>(path: string, schema: T, signal?: AbortSignal): Promise<v.InferOutput<T>> {
  const response = await send(path, signal ? { signal } : {});
  return parseAnswer(schema, path, await response.json());
}

export async function sendJson<T extends v.GenericSchema>(path: string, schema: T, options: RequestOptions): Promise<v.InferOutput<T>> {
  const response = await send(path, options);
  return parseAnswer(schema, path, await response.json());
}

export function describeError(err: unknown): string {
  if (err instanceof ApiError && err.denied) return `Permission denied: your token may not do this (${err.message})`;
  if (err instanceof ApiError && err.status > 0) return `${err.status}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
