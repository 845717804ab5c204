/** Serving the HTTP API (Hono's fetch handler) on a TCP address. */

export interface HttpServer {
  readonly hostname: string;
  readonly port: number;
  /** Stops accepting; with `force`, also closes connections in flight. */
  stop(force?: boolean): Promise<void>;
}

export function serveHttp(fetch: (request: Request) => Response | Promise<Response>, hostname: string, port: number): HttpServer {
  const server = Bun.serve({ fetch, hostname, port, idleTimeout: 0 });
  return {
    hostname,
    port: server.port ?? port,
    stop: (force = false) => server.stop(force),
  };
}
