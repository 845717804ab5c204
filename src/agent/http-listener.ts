/**
 * The agent's HTTP listener: plain or TLS (Nomad's `tls { http = true ... }`),
 * and its certificates renewed on SIGHUP the way Nomad does it, by a new
 * listener on the same address.
 *
 *   start ──> cert_file, key_file, ca_file as readTlsFiles read them ──> listen
 *                │ unreadable: start-up stops naming the key and file (before the listener is made)
 *   reload (SIGHUP) ──> read the files again ──> the old listener stops accepting
 *                │ unreadable: keep serving     ──> a new one listens on the same address
 *                  as before, log why               (connections in flight finish on the old one)
 *   stop ──> every listener, the old ones still finishing included, closes now
 */
import { readFileSync } from "node:fs";
import type { TlsConfig } from "../config/schema.ts";
import { serveHttp, type ConnectionFetch, type HttpServer, type ServeTls } from "../runtime/serve.ts";

/** The PEM files `tls` names, read now; undefined when the API is plain HTTP. Throws naming the key and file. */
export function readTlsFiles(tls: TlsConfig): ServeTls | undefined {
  if (!tls.http) return undefined;
  const read = (key: string, path: string | undefined) => {
    try {
      return readFileSync(path!, "utf8");
    } catch (err) {
      throw new Error(`tls.${key} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  };
  return {
    cert: read("cert_file", tls.cert_file),
    key: read("key_file", tls.key_file),
    ...(tls.verify_https_client ? { clientCa: read("ca_file", tls.ca_file) } : {}),
    minVersion: tls.tls_min_version,
  };
}

/** Bind addresses that mean every interface: a browser on the host reaches them at the loopback address. */
const WILDCARD_HOSTS: Readonly<Record<string, string>> = { "0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1" };

/** The web UI's address for an API bound at hostname:port (IPv6 in brackets, a wildcard as loopback). */
export function uiUrl(hostname: string, port: number, tls: boolean): string {
  const host = WILDCARD_HOSTS[hostname] ?? hostname;
  return `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}/ui/`;
}

export class HttpListener {
  private current: HttpServer;
  private tls: ServeTls | undefined;
  /** Replaced listeners still finishing their requests (blocking queries, followed logs, exec sessions). */
  private readonly finishing = new Set<HttpServer>();

  /** Listens now, with the files readTlsFiles read (none: plain HTTP); throws when the address cannot be bound. */
  constructor(
    private readonly fetch: ConnectionFetch,
    readonly hostname: string,
    port: number,
    tls: ServeTls | undefined,
  ) {
    this.tls = tls;
    try {
      this.current = serveHttp(fetch, hostname, port, this.tls);
    } catch (err) {
      throw new Error(`cannot serve the HTTP API on ${hostname}:${port}: ${(err as Error).message}`);
    }
  }

  get port(): number {
    return this.current.port;
  }

  get isTls(): boolean {
    return this.tls !== undefined;
  }

  /** Where a browser on this host opens the web UI. */
  get uiUrl(): string {
    return uiUrl(this.hostname, this.port, this.isTls);
  }

  /** New certificates (or TLS turned on or off); throws, still serving as before, when the files cannot be read. */
  reload(tls: TlsConfig): void {
    const next = readTlsFiles(tls);
    const previous = this.current;
    this.finishing.add(previous);
    void previous.stop(false).then(() => this.finishing.delete(previous));
    try {
      this.current = serveHttp(this.fetch, this.hostname, previous.port, next);
      this.tls = next;
    } catch (err) {
      // The address was taken in between: serve as before rather than not at all.
      this.current = serveHttp(this.fetch, this.hostname, previous.port, this.tls);
      throw new Error(`cannot serve the HTTP API with the new TLS settings: ${(err as Error).message}`);
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.current, ...this.finishing].map((server) => server.stop(true)));
  }
}
