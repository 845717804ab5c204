/**
 * A client of the OCI distribution API for one repository: manifests and
 * blobs by GET, with the auth a registry asks for in its 401's
 * WWW-Authenticate (Bearer: a token from its realm, with the credentials
 * when there are some; Basic: the credentials), as Docker does.
 *
 * HTTPS always, except for registries Docker also reaches over plain HTTP:
 * 127.0.0.0/8, localhost, and the operator's insecure registries; those are
 * tried over HTTPS first and over HTTP when no TLS connection can be made.
 * Connection failures, 429 and 5xx answers are retried a few times.
 *
 * A registry's own CA and client certificate come from Docker's layout,
 * `<certs dir>/<host[:port]>/`: every `*.crt` is a CA trusted beside the
 * system's, a `NAME.cert` with its `NAME.key` is the client certificate.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { sleepUnlessAborted } from "../../lib/timeout.ts";
import { fetchWithTls, type ClientTls } from "../../runtime/http-client.ts";
import type { ImageReference } from "./reference.ts";

/** Tries per request before a transient failure is the pull's error. */
const MAX_ATTEMPTS = 3;
/** Pause before the second try; doubles for each next. */
const RETRY_BACKOFF_MS = 200;
/** How much of an error answer's body goes into the error message. */
const ERROR_BODY_CHARS = 300;
/** Where Docker looks for a registry's CA and client certificate (plugin "docker" certs_dir). */
export const DEFAULT_CERTS_DIR = "/etc/docker/certs.d";

export interface RegistryCredentials {
  username: string;
  password: string;
}

export interface RegistryClientOptions {
  /** Registries (host[:port]) reached over plain HTTP when they have no TLS (plugin "docker" insecure_registries). */
  insecureRegistries: readonly string[];
  credentials?: RegistryCredentials | undefined;
  /** Docker's certs.d layout; DEFAULT_CERTS_DIR when unset. */
  certsDir?: string | undefined;
  /** Ends the whole pull (image_pull_timeout, or the task being killed). */
  signal: AbortSignal;
}

export class RegistryError extends Error {
  override name = "RegistryError";
}

/** Whether Docker would reach `host` over plain HTTP: loopback, or listed as insecure. */
export function mayUsePlainHttp(host: string, insecure: readonly string[]): boolean {
  const name = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) || name === "localhost" || name === "::1" || insecure.includes(host) || insecure.includes(name);
}

/**
 * TLS settings for `host` from `<certsDir>/<host>/` as Docker reads it, or
 * undefined when that dir does not exist (the system's CAs alone).
 */
export function registryTls(host: string, certsDir: string): ClientTls | undefined {
  const dir = join(certsDir, host);
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir).sort();
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  const cas = files.filter((name) => name.endsWith(".crt")).map(read);
  const tls: ClientTls = cas.length > 0 ? { ca: [...rootCertificates, ...cas].join("\n") } : {};
  const cert = files.find((name) => name.endsWith(".cert"));
  if (cert) {
    const key = `${cert.slice(0, -".cert".length)}.key`;
    if (!files.includes(key)) throw new RegistryError(`${join(dir, cert)}: client certificate without its key ${key}`);
    tls.cert = read(cert);
    tls.key = read(key);
  }
  return tls;
}

/** Go's answer to plain HTTP on a TLS port: the registry has TLS, but no TLS connection could be made. */
const PLAIN_HTTP_TO_TLS_PORT = "HTTP request to an HTTPS server";

/** `Bearer realm="...",service="..."` -> scheme and parameters. */
function parseChallenge(header: string): { scheme: string; params: Record<string, string> } {
  const space = header.indexOf(" ");
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const params: Record<string, string> = {};
  for (const match of header.slice(space + 1).matchAll(/(\w+)="([^"]*)"/g)) params[match[1]!.toLowerCase()] = match[2]!;
  return { scheme, params };
}

function basic(credentials: RegistryCredentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
}

export class RegistryClient {
  private scheme: "https" | "http" = "https";
  private authorization: string | undefined;
  private readonly certsDir: string;
  private readonly tls: ClientTls | undefined;

  constructor(
    private readonly ref: ImageReference,
    private readonly options: RegistryClientOptions,
  ) {
    this.certsDir = options.certsDir ?? DEFAULT_CERTS_DIR;
    this.tls = registryTls(ref.host, this.certsDir);
  }

  /** GET /v2/<repo>/manifests/<reference>: the body and its media type. */
  async manifest(reference: string, accept: string): Promise<{ mediaType: string; bytes: Uint8Array }> {
    const response = await this.get(`manifests/${reference}`, accept);
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { mediaType: (response.headers.get("content-type") ?? "").split(";")[0]!.trim(), bytes };
  }

  /** GET /v2/<repo>/blobs/<digest>: the body as it arrives. */
  async blob(digest: string): Promise<AsyncIterable<Uint8Array>> {
    const response = await this.get(`blobs/${digest}`);
    if (!response.body) throw new RegistryError(`blob ${digest}: the registry sent no body`);
    return response.body;
  }

  private url(path: string): string {
    return `${this.scheme}://${this.ref.host}/v2/${this.ref.repository}/${path}`;
  }

  private async get(path: string, accept?: string): Promise<Response> {
    let lastError: Error = new RegistryError("no attempt made");
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) await sleepUnlessAborted(RETRY_BACKOFF_MS * 2 ** (attempt - 2), this.options.signal);
      let response: Response;
      try {
        response = await this.send(path, accept);
        if (response.status === 401) {
          await this.authenticate(response);
          response = await this.send(path, accept);
          if (response.status === 401 && this.options.credentials) {
            await response.body?.cancel();
            throw new RegistryError(`${this.ref.host} refused the credentials of user "${this.options.credentials.username}" (401 Unauthorized)`);
          }
        }
      } catch (err) {
        if (this.options.signal.aborted || err instanceof RegistryError) throw this.abortReason(err as Error);
        lastError = new RegistryError(`GET ${this.url(path)}: ${(err as Error).message}`);
        continue;
      }
      if (response.ok) return response;
      const body = (await response.text().catch(() => "")).slice(0, ERROR_BODY_CHARS).trim();
      lastError = new RegistryError(`GET ${this.url(path)}: ${response.status} ${response.statusText}${body ? `: ${body}` : ""}`);
      if (response.status !== 429 && response.status < 500) throw lastError;
    }
    throw lastError;
  }

  private abortReason(err: Error): Error {
    const reason: unknown = this.options.signal.reason;
    return this.options.signal.aborted && reason instanceof Error ? reason : err;
  }

  private async send(path: string, accept?: string): Promise<Response> {
    const headers: Record<string, string> = {};
    if (accept) headers.accept = accept;
    if (this.authorization) headers.authorization = this.authorization;
    try {
      return await fetchWithTls(this.url(path), { headers, signal: this.options.signal }, this.tls);
    } catch (err) {
      if (this.scheme === "http" || this.options.signal.aborted || !mayUsePlainHttp(this.ref.host, this.options.insecureRegistries)) throw err;
      // No TLS there: a registry Docker reaches over plain HTTP.
      this.scheme = "http";
      const response = await fetch(this.url(path), { headers, signal: this.options.signal });
      if (response.status !== 400) return response;
      const body = await response.text().catch(() => "");
      if (!body.includes(PLAIN_HTTP_TO_TLS_PORT)) return new Response(body, response);
      throw new RegistryError(`${this.ref.host} serves TLS, but no TLS connection could be made (${(err as Error).message}): put its CA in ${join(this.certsDir, this.ref.host)}/ca.crt, and a client certificate there as NAME.cert with NAME.key if it asks for one`);
    }
  }

  /** Answers a 401's challenge: sets the Authorization later requests carry. */
  private async authenticate(response: Response): Promise<void> {
    await response.body?.cancel();
    const header = response.headers.get("www-authenticate");
    const { credentials } = this.options;
    if (!header) throw new RegistryError(`${this.ref.host} refused access (401) and asked for no known auth`);
    const { scheme, params } = parseChallenge(header);
    if (scheme === "basic") {
      if (!credentials) throw new RegistryError(`${this.ref.host} asks for a user name and password: set the job's auth block or the docker plugin's auth`);
      this.authorization = basic(credentials);
      return;
    }
    if (scheme !== "bearer" || !params.realm) throw new RegistryError(`${this.ref.host} asks for auth scheme "${scheme}", which drover does not speak`);
    const tokenUrl = new URL(params.realm);
    if (params.service) tokenUrl.searchParams.set("service", params.service);
    tokenUrl.searchParams.set("scope", params.scope ?? `repository:${this.ref.repository}:pull`);
    // The registry's own TLS settings, as Docker's token requests go through the registry's transport.
    const tokenResponse = await fetchWithTls(tokenUrl.href, { headers: credentials ? { authorization: basic(credentials) } : {}, signal: this.options.signal }, this.tls);
    if (!tokenResponse.ok) {
      await tokenResponse.body?.cancel();
      const who = credentials ? ` for user "${credentials.username}"` : "";
      throw new RegistryError(`${this.ref.host}: its token service ${tokenUrl.origin}${tokenUrl.pathname} refused a token${who}: ${tokenResponse.status} ${tokenResponse.statusText}`);
    }
    const body = (await tokenResponse.json()) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === "string" ? body.token : typeof body.access_token === "string" ? body.access_token : undefined;
    if (!token) throw new RegistryError(`token from ${tokenUrl.origin}${tokenUrl.pathname}: the answer holds no token`);
    this.authorization = `Bearer ${token}`;
  }
}
