/**
 * Serving the HTTP API (Hono's fetch handler) on a TCP address, websocket
 * routes included (websocket.ts: each runtime's half of Hono's adapter).
 */

export interface HttpServer {
  readonly hostname: string;
  readonly port: number;
  /** Stops accepting; with `force`, also stops waiting for requests in flight. */
  stop(force?: boolean): Promise<void>;
}

/** A fetch handler; it gets the runtime's server as its second argument, which Bun's websocket upgrades need. */
export type FetchHandler = (request: Request, server: unknown) => Response | Promise<Response>;

export type ServeHttp = (fetch: FetchHandler, hostname: string, port: number) => HttpServer;

export { serveHttp } from "@drover/runtime/serve.ts";
