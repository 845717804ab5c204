/**
 * Following a resource with Nomad's blocking queries, as Nomad's UI does:
 *
 *   GET path ──> value, X-Nomad-Index N ──> GET path?index=N&wait=… ──> (held until a change or the wait ends)
 *      ▲                                          │ a newer index: the new value; the same: nothing new
 *      └──────────────────────────────────────────┘
 *   an error ──> reported, tried again after ERROR_RETRY_MS (a 403 or 404 too: a token or a job may come)
 *   tab hidden ──> the loop waits until it is visible again
 */
import type * as v from "valibot";
import { ApiError, parseAnswer, send } from "./client.ts";
import { pause, whenVisible } from "./visibility.ts";

/**
 * How long the agent may hold a query: short enough that a tab coming back
 * from the background, or a page left open, picks up again soon, long enough
 * that an idle page costs the agent a request every few seconds at most.
 */
const BLOCKING_WAIT = "10s";
/** Wait before trying again after a failure: the agent restarting, a network blip. */
const ERROR_RETRY_MS = 2_000;

export interface WatchHandlers<T> {
  value(value: T): void;
  error(error: Error): void;
}

/** Follows `path` until `signal` aborts. */
export async function watch<S extends v.GenericSchema>(path: string, schema: S, signal: AbortSignal, handlers: WatchHandlers<v.InferOutput<S>>): Promise<void> {
  let index = 0;
  const separator = path.includes("?") ? "&" : "?";
  while (!signal.aborted) {
    await whenVisible(signal);
    if (signal.aborted) return;
    const url = index > 0 ? `${path}${separator}index=${index}&wait=${BLOCKING_WAIT}` : path;
    try {
      const response = await send(url, { signal });
      const next = Number(response.headers.get("X-Nomad-Index") ?? "0");
      const json: unknown = await response.json();
      if (signal.aborted) return;
      // An index that went backwards (the agent's state was reset) starts over.
      if (next !== index || index === 0) handlers.value(parseAnswer(schema, path, json));
      index = Number.isFinite(next) && next > 0 ? next : 0;
      // An endpoint without an index cannot block: poll it instead of hammering it.
      if (index === 0) await pause(ERROR_RETRY_MS, signal);
    } catch (err) {
      if (signal.aborted) return;
      handlers.error(err instanceof Error ? err : new ApiError(0, String(err)));
      index = 0;
      await pause(ERROR_RETRY_MS, signal);
    }
  }
}
