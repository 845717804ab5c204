/**
 * GET /v1/event/stream?topic=Topic[:key]...&index=N&namespace=: the server's
 * events as they are committed (Nomad 1.x's event stream), one JSON object
 * per line: {"Index": N, "Events": [...]} per write, and {} as a heartbeat
 * after EVENT_HEARTBEAT_MS of silence. Without a topic every event is sent;
 * `index` replays what is still buffered from that index on.
 */
import type { Hono } from "hono";
import type { EventBroker, Subscription } from "../../server/events/broker.ts";
import { ALL_NAMESPACES } from "../../structs/namespace.ts";
import { allowedIn, requestNamespace } from "../acl/namespaces.ts";
import { badRequest } from "../errors.ts";
import { liveStream } from "../live-stream.ts";

/** Nomad's JSON stream heartbeat. */
export const EVENT_HEARTBEAT_MS = 30_000;
/** Writes a subscriber may fall behind by before it is cut off (and should resubscribe from its last index). */
export const MAX_PENDING_BATCHES = 1_000;

/** `topic=` values: "Job:web" wants web's job events, "Job" (or "Job:*") all of them, "*" every topic. */
export function parseTopics(values: readonly string[]): Map<string, string[]> {
  const topics = new Map<string, string[]>();
  if (values.length === 0) topics.set("*", ["*"]);
  for (const value of values) {
    const parts = value.split(":");
    if (parts.length > 2) throw badRequest(`Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: ${value}`);
    const [topic, key = "*"] = parts as [string, string?];
    topics.set(topic, [...(topics.get(topic) ?? []), key]);
  }
  return topics;
}

export function eventRoutes(events: EventBroker) {
  return (app: Hono) => {
    app.get("/v1/event/stream", (c) => {
      const indexText = c.req.query("index") ?? "0";
      if (!/^\d+$/.test(indexText)) throw badRequest(`Unable to parse index: "${indexText}" is not a non-negative integer`);
      const namespace = requestNamespace(c);
      const subscription: Subscription = {
        topics: parseTopics(c.req.queries("topic") ?? []),
        namespace,
        // The guard let `*` through for a right in any namespace; each event shows only where the caller holds it.
        ...(namespace === ALL_NAMESPACES ? { visible: (eventNamespace: string) => allowedIn(c, eventNamespace) } : {}),
      };
      const encoder = new TextEncoder();
      const body = liveStream({
        subscribe: (push) => events.subscribe(subscription, Number(indexText), (batch) => push(encoder.encode(`${JSON.stringify(batch)}\n`))),
        signal: c.req.raw.signal,
        maxPendingChunks: MAX_PENDING_BATCHES,
        heartbeat: { everyMs: EVENT_HEARTBEAT_MS, chunk: encoder.encode("{}\n") },
      });
      return c.body(body, 200, { "Content-Type": "application/json", "Cache-Control": "no-cache" });
    });
  };
}
