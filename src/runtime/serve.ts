/** Serving the HTTP API (Hono's fetch handler) on a TCP address, websocket routes included. */
import { websocketHandlers } from "./websocket.ts";

export interface HttpServer {
  readonly hostname: string;
  readonly port: number;
  /** Stops accepting; with `force`, also closes connections in flight. */
  stop(force?: boolean): Promise<void>;
}

/** `fetch` gets the runtime's server as its second argument, which websocket upgrades need. */
export function serveHttp(fetch: (request: Request, server: unknown) => Response | Promise<Response>, hostname: string, port: number): HttpServer {
  const server = Bun.serve({ fetch, websocket: websocketHandlers, hostname, port, idleTimeout: 0 });
  return {
    hostname,
    port: server.port ?? port,
    stop: (force = false) => server.stop(force),
  };
}
