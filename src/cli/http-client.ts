/**
 * The CLI's client for the agent's HTTP API. A refused connection is an
 * AgentUnreachableError saying so; an error response is an AgentError with
 * the agent's message and status; a server that answers with a web page
 * (something other than a drover or Nomad agent) is one line saying so.
 *
 * Every setting comes from its flag, else the environment as Nomad's CLI
 * takes it, drover's own variable first (so it wins), then Nomad's:
 *
 *   -address          DROVER_ADDR, NOMAD_ADDR                default http://127.0.0.1:4646
 *   -token            DROVER_TOKEN, NOMAD_TOKEN              sent as X-Nomad-Token
 *   -region           DROVER_REGION, NOMAD_REGION            sent as ?region=
 *   -namespace        DROVER_NAMESPACE, NOMAD_NAMESPACE      sent as ?namespace=
 *   -ca-cert          DROVER_CACERT, NOMAD_CACERT            the CA to trust for https
 *   -client-cert      DROVER_CLIENT_CERT, NOMAD_CLIENT_CERT  a certificate to present
 *   -client-key       DROVER_CLIENT_KEY, NOMAD_CLIENT_KEY    its key
 *   -tls-server-name  DROVER_TLS_SERVER_NAME, NOMAD_TLS_SERVER_NAME  the name to verify (SNI)
 *   -tls-skip-verify  DROVER_SKIP_VERIFY, NOMAD_SKIP_VERIFY  accept any server certificate
 */
import { readFileSync } from "node:fs";
import { DEFAULT_HTTP_PORT } from "../config/schema.ts";
import { fetchWithTls, openWebSocket, type ClientTls } from "../runtime/http-client.ts";

export const DEFAULT_ADDRESS = `http://127.0.0.1:${DEFAULT_HTTP_PORT}`;

export class AgentUnreachableError extends Error {
  override name = "AgentUnreachableError";
}

/** A TLS file named by a flag or variable cannot be read. */
export class ClientConfigError extends Error {
  override name = "ClientConfigError";
}

/** What the connection flags said (each optional: the environment fills in). */
export interface ConnectionFlags {
  address?: string;
  token?: string;
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  tlsServerName?: string;
  tlsSkipVerify?: boolean;
  region?: string;
  namespace?: string;
}

export interface ClientAuth {
  token?: string;
  tls?: ClientTls;
  /** Sent with every request as ?region= and ?namespace=, as Nomad's API client does. */
  region?: string;
  namespace?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** A flag's value, else drover's variable, else Nomad's. */
const pick = (flag: string | undefined, env: Env, name: string) => flag ?? env[`DROVER_${name}`] ?? env[`NOMAD_${name}`];

function readPem(what: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new ClientConfigError(`cannot read the ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The agent answered with an error status; the message is the agent's own. */
export class AgentError extends Error {
  override name = "AgentError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Indexed<T> {
  body: T;
  /** X-Nomad-Index: pass back as ?index= to wait for a change. */
  index: number;
}

/** An agent answers JSON or plain text, never HTML: an HTML answer comes from some other web server. */
function isWebPage(response: Response): boolean {
  return (response.headers.get("Content-Type") ?? "").includes("text/html");
}

function withScheme(address: string): string {
  const trimmed = address.replace(/\/+$/, "");
  return /^[a-z]+:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
}

export class AgentClient {
  readonly address: string;

  constructor(
    address: string,
    private readonly auth: ClientAuth = {},
  ) {
    this.address = withScheme(address);
  }

  /** The agent named by the -address flag, DROVER_ADDR, or the default, with the token and TLS the flags or environment give. */
  static resolve(flags: ConnectionFlags, env: Env): AgentClient {
    const token = pick(flags.token, env, "TOKEN");
    const caCert = pick(flags.caCert, env, "CACERT");
    const clientCert = pick(flags.clientCert, env, "CLIENT_CERT");
    const clientKey = pick(flags.clientKey, env, "CLIENT_KEY");
    const serverName = pick(flags.tlsServerName, env, "TLS_SERVER_NAME");
    const region = pick(flags.region, env, "REGION");
    const namespace = pick(flags.namespace, env, "NAMESPACE");
    const skipVerify = flags.tlsSkipVerify ?? ["1", "true"].includes((pick(undefined, env, "SKIP_VERIFY") ?? "").toLowerCase());
    if ((clientCert === undefined) !== (clientKey === undefined)) throw new ClientConfigError("a client certificate needs its key: give both -client-cert and -client-key");
    const tls: ClientTls = {
      ...(caCert ? { ca: readPem("CA certificate", caCert) } : {}),
      ...(clientCert ? { cert: readPem("client certificate", clientCert) } : {}),
      ...(clientKey ? { key: readPem("client key", clientKey) } : {}),
      ...(serverName ? { serverName } : {}),
      ...(skipVerify ? { skipVerify } : {}),
    };
    return new AgentClient(pick(flags.address, env, "ADDR") || DEFAULT_ADDRESS, {
      ...(token ? { token } : {}),
      ...(region ? { region } : {}),
      ...(namespace ? { namespace } : {}),
      ...(Object.keys(tls).length > 0 ? { tls } : {}),
    });
  }

  /** The namespace every request names (-namespace, $NOMAD_NAMESPACE), if any. */
  get namespace(): string | undefined {
    return this.auth.namespace;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...extra, ...(this.auth.token ? { "X-Nomad-Token": this.auth.token } : {}) };
  }

  /** A websocket to `path` with this client's token and TLS. */
  websocket(path: string, query: Query = {}): WebSocket {
    return openWebSocket(this.url(path, query), this.headers(), this.auth.tls);
  }

  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    const scoped: Query = { region: this.auth.region, namespace: this.auth.namespace, ...query };
    for (const [key, value] of Object.entries(scoped)) if (value !== undefined) params.set(key, String(value));
    const search = params.toString();
    return `${this.address}${path}${search ? `?${search}` : ""}`;
  }

  /** The raw response of a successful request; anything else throws. */
  async request(method: string, path: string, options: { query?: Query; body?: unknown; signal?: AbortSignal } = {}): Promise<Response> {
    let response: Response;
    try {
      response = await fetchWithTls(
        this.url(path, options.query),
        {
          method,
          headers: this.headers(options.body === undefined ? {} : { "Content-Type": "application/json" }),
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: options.signal,
        },
        this.auth.tls,
      );
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      const code = (err as { code?: string }).code ?? "";
      if (/CERT|SELF_SIGNED|VERIFY|TLS|SSL/.test(code)) {
        throw new AgentUnreachableError(
          `cannot talk TLS with the drover agent at ${this.address}: ${(err as Error).message} (is the agent's CA given with -ca-cert or $NOMAD_CACERT?)`,
        );
      }
      if (code === "ECONNRESET" && this.address.startsWith("http:")) {
        throw new AgentUnreachableError(`the drover agent at ${this.address} hung up: if it serves TLS, use an https:// address`);
      }
      const detail = code === "ECONNREFUSED" || code === "ConnectionRefused" ? "" : ` (${(err as Error).message})`;
      throw new AgentUnreachableError(`cannot reach the drover agent at ${this.address}: is it running?${detail}`);
    }
    if (isWebPage(response)) throw this.notAnAgent(response.status);
    if (!response.ok) {
      // The agent, like Nomad, answers an error with its message as the plain-text body.
      throw new AgentError(response.status, (await response.text()).trim() || response.statusText);
    }
    return response;
  }

  private notAnAgent(status: number): AgentUnreachableError {
    return new AgentUnreachableError(`the server at ${this.address} is not a drover or Nomad agent: it answered ${status} with a web page (check -address or $NOMAD_ADDR)`);
  }

  /** The body as JSON; anything else means the server is not an agent. */
  private async json<T>(response: Response): Promise<T> {
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw this.notAnAgent(response.status);
    }
  }

  async get<T>(path: string, query: Query = {}, signal?: AbortSignal): Promise<Indexed<T>> {
    const response = await this.request("GET", path, { query, signal });
    return { body: await this.json<T>(response), index: Number(response.headers.get("X-Nomad-Index") ?? 0) };
  }

  async write<T>(method: "POST" | "PUT" | "DELETE", path: string, body?: unknown, query: Query = {}): Promise<T> {
    const response = await this.request(method, path, { query, body });
    return this.json<T>(response);
  }
}
