/**
 * The CLI's requests to the agent with its TLS settings (a CA to trust, a
 * client certificate, or no verification at all): Bun's fetch and WebSocket
 * take them as a `tls` option of their own.
 */

/** PEM texts, read by the caller. */
export interface ClientTls {
  ca?: string;
  cert?: string;
  key?: string;
  /** Accept any server certificate (Nomad's -tls-skip-verify). */
  skipVerify?: boolean;
}

function bunTls(tls: ClientTls) {
  return {
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
    ...(tls.skipVerify ? { rejectUnauthorized: false } : {}),
  };
}

export function fetchWithTls(url: string, init: RequestInit, tls: ClientTls | undefined): Promise<Response> {
  return fetch(url, tls ? { ...init, tls: bunTls(tls) } : init);
}

/** A websocket to `url` (http(s):// or ws(s)://) sending `headers` with its upgrade request. */
export function openWebSocket(url: string, headers: Record<string, string>, tls: ClientTls | undefined): WebSocket {
  return new WebSocket(url.replace(/^http/, "ws"), { headers, ...(tls ? { tls: bunTls(tls) } : {}) });
}
