/** runtime/serve.ts on Bun: Bun.serve, with the upgraded connections' handlers from hono/bun. */
import type { Endpoint } from "../sock-diag.ts";
import { TLS12_CIPHERS, type ServeHttp, type ServeTls } from "../contract/serve.ts";
import { websocketHandlers } from "./websocket.ts";

/** OpenSSL's SSL_OP_NO_TLSv1_2, for a server that speaks TLS 1.3 only. */
const SSL_OP_NO_TLS_1_2 = 0x08000000;

function bunTls(tls: ServeTls) {
  return {
    cert: tls.cert,
    key: tls.key,
    ciphers: TLS12_CIPHERS,
    ...(tls.minVersion === "tls13" ? { secureOptions: SSL_OP_NO_TLS_1_2 } : {}),
    ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

export const serveHttp: ServeHttp = (fetch, hostname, port, tls) => {
  let local: Endpoint = { address: hostname, port };
  // idleTimeout 0: blocking queries and followed logs hold a request open for minutes.
  const server = Bun.serve({
    hostname,
    port,
    idleTimeout: 0,
    ...(tls ? { tls: bunTls(tls) } : {}),
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

export { serveHttpUnix } from "./unix-http.ts";
