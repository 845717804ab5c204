/** runtime/serve.ts on Bun: Bun.serve, with the upgraded connections' handlers from hono/bun. */
import type { Endpoint } from "../sock-diag.ts";
import type { ServeHttp, ServeHttpUnix } from "../serve.ts";
import { websocketHandlers } from "./websocket.ts";

export const serveHttp: ServeHttp = (fetch, hostname, port) => {
  let local: Endpoint = { address: hostname, port };
  // idleTimeout 0: blocking queries and followed logs hold a request open for minutes.
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
};

export const serveHttpUnix: ServeHttpUnix = (fetch, path) => {
  const server = Bun.serve({ unix: path, fetch: (request, bun) => fetch(request, { kind: "unix", path }, bun) });
  return { stop: () => server.stop(true) };
};
