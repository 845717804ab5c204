/** runtime/serve.ts on Deno: Deno.serve (hono/deno upgrades websockets in the handler itself). */
import type { ServeHttp } from "../serve.ts";

export const serveHttp: ServeHttp = (fetch, hostname, port) => {
  // No server for the handler: hono/deno upgrades websockets from the request alone.
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({ hostname, port, onListen: () => {} }, (request) => fetch(request, undefined));
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
