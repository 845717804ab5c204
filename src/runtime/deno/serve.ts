/** runtime/serve.ts on Deno: Deno.serve (hono/deno upgrades websockets in the handler itself). */
import type { Endpoint } from "../sock-diag.ts";
import type { HttpServer, ServeHttp, ServeHttpUnix } from "../contract/serve.ts";

/**
 * Deno has no forced close: shutdown() stops accepting at once and then waits
 * for requests in flight (a blocking query may wait minutes); `force` does not wait.
 */
function stopper(server: Deno.HttpServer): HttpServer["stop"] {
  return async (force = false) => {
    const done = server.shutdown();
    if (!force) await done;
  };
}

export const serveHttp: ServeHttp = (fetch, hostname, port, tls) => {
  // Deno's TLS (rustls) offers TLS 1.2 and 1.3 with AEAD suites only, but takes no client CA and no minimum version.
  if (tls?.clientCa) throw new Error("verify_https_client is not available on Deno: Deno.serve cannot ask for client certificates");
  if (tls?.minVersion === "tls13") throw new Error('tls_min_version = "tls13" is not available on Deno');
  let local: Endpoint = { address: hostname, port };
  // No server for the handler: hono/deno upgrades websockets from the request alone.
  const options = { hostname, port, onListen: () => {}, ...(tls ? { cert: tls.cert, key: tls.key } : {}) };
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(options, (request, info) => {
    const remote = info.remoteAddr as Deno.NetAddr;
    return fetch(request, { kind: "tcp", remote: { address: remote.hostname, port: remote.port }, local }, undefined);
  });
  local = { address: hostname, port: server.addr.port };
  return { hostname, port: server.addr.port, stop: stopper(server) };
};

/**
 * A Deno.serve per socket: Deno's node:http drops a kept-alive connection
 * handed to it from a node:net listener, so the shared server Bun runs
 * (bun/unix-http.ts) is not an option here. Deno removes the socket file
 * once the requests in flight are done, which close() waits for.
 */
export const serveHttpUnix: ServeHttpUnix = (fetch) => ({
  listen(path, tag) {
    const connection = { kind: "unix", path } as const;
    const server = Deno.serve({ path, onListen: () => {} }, (request) => fetch(request, connection, tag));
    return { close: stopper(server) };
  },
});
