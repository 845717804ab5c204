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
 */
import { sleepUnlessAborted } from "../../lib/timeout.ts";
import type { ImageReference } from "./reference.ts";

/** Tries per request before a transient failure is the pull's error. */
const MAX_ATTEMPTS = 3;
/** Pause before the second try; doubles for each next. */
const RETRY_BACKOFF_MS = 200;
/** How much of an error answer's body goes into the error message. */
const ERROR_BODY_CHARS = 300;

export interface RegistryCredentials {
  username: string;
  password: string;
}

export interface RegistryClientOptions {
  /** Registries (host[:port]) reached over plain HTTP when they have no TLS (plugin "docker" insecure_registries). */
  insecureRegistries: readonly string[];
  credentials?: RegistryCredentials | undefined;
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

  constructor(
    private readonly ref: ImageReference,
    private readonly options: RegistryClientOptions,
  ) {}

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
      return await fetch(this.url(path), { headers, signal: this.options.signal });
    } catch (err) {
      if (this.scheme === "http" || this.options.signal.aborted || !mayUsePlainHttp(this.ref.host, this.options.insecureRegistries)) throw err;
      // No TLS there: a registry Docker reaches over plain HTTP.
      this.scheme = "http";
      return fetch(this.url(path), { headers, signal: this.options.signal });
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
    const tokenResponse = await fetch(tokenUrl, { headers: credentials ? { authorization: basic(credentials) } : {}, signal: this.options.signal });
    if (!tokenResponse.ok) throw new RegistryError(`token from ${tokenUrl.origin}${tokenUrl.pathname}: ${tokenResponse.status} ${tokenResponse.statusText}`);
    const body = (await tokenResponse.json()) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === "string" ? body.token : typeof body.access_token === "string" ? body.access_token : undefined;
    if (!token) throw new RegistryError(`token from ${tokenUrl.origin}${tokenUrl.pathname}: the answer holds no token`);
    this.authorization = `Bearer ${token}`;
  }
}
