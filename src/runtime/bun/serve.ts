/** runtime/serve.ts on Bun: Bun.serve, with the upgraded connections' handlers from hono/bun. */
import type { ServeHttp } from "../serve.ts";
import { websocketHandlers } from "./websocket.ts";

export const serveHttp: ServeHttp = (fetch, hostname, port) => {
  // idleTimeout 0: blocking queries and followed logs hold a request open for minutes.
  const server = Bun.serve({ fetch, websocket: websocketHandlers, hostname, port, idleTimeout: 0 });
  return {
    hostname,
    port: server.port ?? port,
    stop: (force = false) => server.stop(force),
  };
};
