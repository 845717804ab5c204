/** runtime/serve.ts on Bun: Bun.serve, with hono/bun's websocket handler. */
import { upgradeWebSocket as bunUpgradeWebSocket, websocket } from "hono/bun";
import type { ServeHttp, UpgradeWebSocket } from "../serve.ts";

export const upgradeWebSocket: UpgradeWebSocket = bunUpgradeWebSocket;

export const serveHttp: ServeHttp = (fetch, hostname, port) => {
  // idleTimeout 0: blocking queries and followed logs hold a request open for minutes.
  const server = Bun.serve({ fetch, hostname, port, idleTimeout: 0, websocket });
  return {
    hostname,
    port: server.port ?? port,
    stop: (force = false) => server.stop(force),
  };
};
