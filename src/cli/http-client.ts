/**
 * The CLI's client for the agent's HTTP API. The address comes from
 * `-address`, else DROVER_ADDR, else http://127.0.0.1:4646. A refused
 * connection is an AgentUnreachableError saying so; an error response is an
 * AgentError with the agent's message and status.
 */
import { DEFAULT_HTTP_PORT } from "../config/schema.ts";

export const DEFAULT_ADDRESS = `http://127.0.0.1:${DEFAULT_HTTP_PORT}`;

export class AgentUnreachableError extends Error {
  override name = "AgentUnreachableError";
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

function withScheme(address: string): string {
  const trimmed = address.replace(/\/+$/, "");
  return /^[a-z]+:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
}

export class AgentClient {
  readonly address: string;

  constructor(address: string) {
    this.address = withScheme(address);
  }

  /** The agent named by the -address flag, DROVER_ADDR, or the default. */
  static resolve(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): AgentClient {
    return new AgentClient(flag ?? env.DROVER_ADDR ?? DEFAULT_ADDRESS);
  }

  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
    const search = params.toString();
    return `${this.address}${path}${search ? `?${search}` : ""}`;
  }

  /** The raw response of a successful request; anything else throws. */
  async request(method: string, path: string, options: { query?: Query; body?: unknown; signal?: AbortSignal } = {}): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(this.url(path, options.query), {
        method,
        headers: options.body === undefined ? {} : { "Content-Type": "application/json" },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      const code = (err as { code?: string }).code;
      const detail = code === "ECONNREFUSED" || code === "ConnectionRefused" ? "" : ` (${(err as Error).message})`;
      throw new AgentUnreachableError(`cannot reach the drover agent at ${this.address}: is it running?${detail}`);
    }
    if (!response.ok) {
      const text = await response.text();
      let message = text.trim() || response.statusText;
      try {
        const parsed = JSON.parse(text) as { error?: unknown };
        if (typeof parsed.error === "string") message = parsed.error;
      } catch {
        // Not JSON: the text is the message.
      }
      throw new AgentError(response.status, message);
    }
    return response;
  }

  async get<T>(path: string, query: Query = {}, signal?: AbortSignal): Promise<Indexed<T>> {
    const response = await this.request("GET", path, { query, signal });
    return { body: (await response.json()) as T, index: Number(response.headers.get("X-Nomad-Index") ?? 0) };
  }

  async write<T>(method: "POST" | "PUT" | "DELETE", path: string, body?: unknown, query: Query = {}): Promise<T> {
    const response = await this.request(method, path, { query, body });
    return (await response.json()) as T;
  }
}
