/**
 * Serving the HTTP API (Hono's fetch handler) on a TCP address, websocket
 * routes included, and on unix sockets (the task API). Each request reaches
 * the handler with the connection it came on, so the API can tell who is
 * calling, and with the runtime's server, which websocket upgrades need.
 */
import type { Endpoint } from "./sock-diag.ts";
import { websocketHandlers } from "./websocket.ts";

/** The connection a request came on: its peer and where it was accepted, or the unix socket's path. */
export type Connection = { kind: "tcp"; remote: Endpoint; local: Endpoint } | { kind: "unix"; path: string };

export type ConnectionFetch = (request: Request, connection: Connection, server: unknown) => Response | Promise<Response>;

export interface HttpServer {
  readonly hostname: string;
  readonly port: number;
  /** Stops accepting; with `force`, also closes connections in flight. */
  stop(force?: boolean): Promise<void>;
}

export function serveHttp(fetch: ConnectionFetch, hostname: string, port: number): HttpServer {
  let local: Endpoint = { address: hostname, port };
  const server = Bun.serve({
    hostname,
    port,
    idleTimeout: 0,
    websocket: websocketHandlers,
    fetch(request, bun) {
      const remote = bun.requestIP(request);
      // Bun always knows a TCP request's peer; an address-less one is refused by the API as unknown.
      return fetch(request, { kind: "tcp", remote: remote ? { address: remote.address, port: remote.port } : { address: "", port: 0 }, local }, bun);
    },
  });
  local = { address: hostname, port: server.port ?? port };
  return {
    hostname,
    port: local.port,
    stop: (force = false) => server.stop(force),
  };
}

export interface UnixHttpServer {
  stop(): Promise<void>;
}

/**
 * Serves on a unix socket at `path` (which must not exist). `path` may name
 * the directory through an open descriptor (/proc/self/fd/N/api.sock), which
 * keeps it under the 107-byte limit however deep the directory is.
 */
export function serveHttpUnix(fetch: ConnectionFetch, path: string): UnixHttpServer {
  const server = Bun.serve({ unix: path, fetch: (request, bun) => fetch(request, { kind: "unix", path }, bun) });
  return { stop: () => server.stop(true) };
}
