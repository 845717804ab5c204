/**
 * Serving the HTTP API (Hono's fetch handler) on a TCP address, websocket
 * routes included (websocket.ts: each runtime's half of Hono's adapter), and
 * on unix sockets (the task API, one per task). Each request reaches the handler with the
 * connection it came on, so the API can tell who is calling, and with the
 * runtime's server, which Bun's websocket upgrades need.
 */
import type { Endpoint } from "../sock-diag.ts";

/** The connection a request came on: its peer and where it was accepted, or the unix socket's path. */
export type Connection = { kind: "tcp"; remote: Endpoint; local: Endpoint } | { kind: "unix"; path: string };

export type ConnectionFetch = (request: Request, connection: Connection, server: unknown) => Response | Promise<Response>;

export interface HttpServer {
  readonly hostname: string;
  readonly port: number;
  /** Stops accepting; with `force`, also stops waiting for requests in flight. */
  stop(force?: boolean): Promise<void>;
}

/** TLS for the HTTP API: PEM texts, read by the caller. */
export interface ServeTls {
  cert: string;
  key: string;
  /** With it, every client must present a certificate this CA signed. */
  clientCa?: string;
  minVersion: "tls12" | "tls13";
}

/**
 * TLS 1.2's suites with forward secrecy and an AEAD cipher only (Nomad's
 * default list); TLS 1.0 and 1.1 are never offered, and 1.3's suites are
 * all of this kind.
 */
export const TLS12_CIPHERS = [
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
].join(":");

/** Serves `fetch` on hostname:port, over TLS when `tls` is given. Throws when the address cannot be bound. */
export type ServeHttp = (fetch: ConnectionFetch, hostname: string, port: number, tls?: ServeTls) => HttpServer;

/** A request on a unix socket reaches this with the connection it came on and its socket's tag. */
export type UnixFetch<T> = (request: Request, connection: Connection, tag: T) => Response | Promise<Response>;

export interface UnixHttpListener {
  /** Stops accepting, ends its connections (Deno: waits for them) and removes the socket file. */
  close(): Promise<void>;
}

export interface UnixHttpHost<T> {
  /**
   * Listens on `path` (which must not exist); throws when it cannot. `path`
   * may name the directory through an open descriptor
   * (/proc/self/fd/N/api.sock), which keeps it under the 107-byte limit
   * however deep the directory is; the socket file is removed through the
   * same path on close, so the caller keeps N open until close() returns.
   */
  listen(path: string, tag: T): UnixHttpListener;
}

/** Serves `fetch` on as many unix sockets as are listened on, each request with its socket's tag. */
export type ServeHttpUnix = <T>(fetch: UnixFetch<T>) => UnixHttpHost<T>;
