/**
 * Serving the HTTP API (Hono's fetch handler) on a TCP address, websocket
 * routes included (websocket.ts: each runtime's half of Hono's adapter), and
 * on unix sockets (the task API). Each request reaches the handler with the
 * connection it came on, so the API can tell who is calling, and with the
 * runtime's server, which Bun's websocket upgrades need.
 */
import type { Endpoint } from "./sock-diag.ts";

/** The connection a request came on: its peer and where it was accepted, or the unix socket's path. */
export type Connection = { kind: "tcp"; remote: Endpoint; local: Endpoint } | { kind: "unix"; path: string };

export type ConnectionFetch = (request: Request, connection: Connection, server: unknown) => Response | Promise<Response>;

export interface HttpServer {
  readonly hostname: string;
  readonly port: number;
  /** Stops accepting; with `force`, also stops waiting for requests in flight. */
  stop(force?: boolean): Promise<void>;
}

export interface UnixHttpServer {
  stop(): Promise<void>;
}

export type ServeHttp = (fetch: ConnectionFetch, hostname: string, port: number) => HttpServer;

/**
 * Serves on a unix socket at `path` (which must not exist). `path` may name
 * the directory through an open descriptor (/proc/self/fd/N/api.sock), which
 * keeps it under the 107-byte limit however deep the directory is.
 */
export type ServeHttpUnix = (fetch: ConnectionFetch, path: string) => UnixHttpServer;

export { serveHttp, serveHttpUnix } from "@drover/runtime/serve.ts";
