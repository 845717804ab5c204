/** runtime/http-client.ts on Bun: fetch and WebSocket take a `tls` option. */
import type { ClientTls, FetchWithTls, OpenWebSocket } from "../http-client.ts";

function bunTls(tls: ClientTls) {
  return {
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
    ...(tls.serverName ? { serverName: tls.serverName } : {}),
    ...(tls.skipVerify ? { rejectUnauthorized: false } : {}),
  };
}

export const fetchWithTls: FetchWithTls = (url, init, tls) => fetch(url, tls ? { ...init, tls: bunTls(tls) } : init);

export const openWebSocket: OpenWebSocket = (url, headers, tls) => new WebSocket(url.replace(/^http/, "ws"), { headers, ...(tls ? { tls: bunTls(tls) } : {}) });
