/** runtime/http-client.ts on Deno: an HttpClient carries the CA and the client certificate. */
import type { ClientTls, FetchWithTls, OpenWebSocket } from "../http-client.ts";

function httpClient(tls: ClientTls): Deno.HttpClient {
  // Deno verifies every certificate unless the whole process runs with --unsafely-ignore-certificate-errors.
  if (tls.skipVerify) throw new Error("-tls-skip-verify is not available on Deno: run deno with --unsafely-ignore-certificate-errors");
  if (tls.serverName) throw new Error("-tls-server-name is not available on Deno: address the agent by the name its certificate carries");
  return Deno.createHttpClient({
    ...(tls.ca ? { caCerts: [tls.ca] } : {}),
    ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
  });
}

export const fetchWithTls: FetchWithTls = (url, init, tls) => fetch(url, tls ? { ...init, client: httpClient(tls) } : init);

export const openWebSocket: OpenWebSocket = (url, headers, tls) => new WebSocket(url.replace(/^http/, "ws"), { headers, ...(tls ? { client: httpClient(tls) } : {}) });
