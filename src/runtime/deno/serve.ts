/** runtime/serve.ts on Deno: Deno.serve, with hono/deno's websocket upgrade. */
import { upgradeWebSocket as denoUpgradeWebSocket } from "hono/deno";
import type { ServeHttp, UpgradeWebSocket } from "../serve.ts";

export const upgradeWebSocket: UpgradeWebSocket = denoUpgradeWebSocket;

export const serveHttp: ServeHttp = (fetch, hostname, port) => {
  const server = Deno.serve({ hostname, port, onListen: () => {} }, (request) => fetch(request));
  return {
    hostname,
    port: server.addr.port,
    // Deno has no forced close: shutdown() stops accepting at once and then waits for
    // requests in flight (a blocking query may wait minutes); `force` does not wait.
    stop: async (force = false) => {
      const done = server.shutdown();
      if (!force) await done;
    },
  };
};
