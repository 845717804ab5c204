/**
 * The CLI's requests to the agent with its TLS settings (a CA to trust, a
 * client certificate, or no verification at all); each runtime takes them
 * its own way (Bun: a `tls` option; Deno: an HttpClient).
 */

/** PEM texts, read by the caller. */
export interface ClientTls {
  ca?: string;
  cert?: string;
  key?: string;
  /** The name to verify the server's certificate against and send as SNI (Nomad's -tls-server-name). */
  serverName?: string;
  /** Accept any server certificate (Nomad's -tls-skip-verify). */
  skipVerify?: boolean;
}

export type FetchWithTls = (url: string, init: RequestInit, tls: ClientTls | undefined) => Promise<Response>;

/** A websocket to `url` (http(s):// or ws(s)://) sending `headers` with its upgrade request. */
export type OpenWebSocket = (url: string, headers: Record<string, string>, tls: ClientTls | undefined) => WebSocket;

export { fetchWithTls, openWebSocket } from "@drover/runtime/http-client.ts";
