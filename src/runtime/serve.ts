/**
 * Serving the HTTP API (Hono's fetch handler) on a TCP address, websocket
 * upgrades included: a route answers `upgradeWebSocket(...)` from here, which
 * is Hono's adapter for the runtime that serves it.
 */
import type { UpgradeWebSocket } from "hono/ws";

export interface HttpServer {
  readonly hostname: string;
  readonly port: number;
  /** Stops accepting; with `force`, also stops waiting for requests in flight. */
  stop(force?: boolean): Promise<void>;
}

/** A fetch handler; `env` is what the runtime passes along (Bun: its server, which Hono's websockets need). */
export type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

export type ServeHttp = (fetch: FetchHandler, hostname: string, port: number) => HttpServer;

export type { UpgradeWebSocket };

export { serveHttp, upgradeWebSocket } from "@drover/runtime/serve.ts";
