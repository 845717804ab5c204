/**
 * runtime/serve.ts's serveHttpUnix on Bun: many unix sockets, one HTTP
 * server (the task API, one socket per task).
 * Each socket is a bare node:net listener that hands what it accepts to a
 * single node:http server, and a request reaches the handler with the tag
 * of the socket it came through (the task bound to it), so a task is known
 * by where it connected, never by anything it sends. A server per socket
 * (Bun.serve) cost ~15 KiB per task; a bare listener ~4 KiB
 * (bench/task-api-listeners.ts). Deno's node:http drops a kept-alive
 * connection handed to it this way, so Deno keeps a Deno.serve per socket.
 *
 *   listen(path, tag) ─> node:net server ─ connection ─> shared node:http server
 *                                                          └─> fetch(Request, {unix, path}, tag) ─> Response written back
 *   close() ─> stops accepting, ends its open connections, removes its socket file
 *
 * A listener removes its socket file through the path it was given when it
 * is closed (contract/serve.ts says why the caller keeps that path valid).
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { Server, Socket } from "node:net";
import { Readable } from "node:stream";
import type { Connection, ServeHttpUnix, UnixFetch, UnixHttpHost, UnixHttpListener } from "../contract/serve.ts";

/**
 * node:net and node:http, loaded when the first socket is made: together they
 * cost ~2.4 MiB, which an agent that runs no task (a server) need not pay.
 */
const nodeNet = () => process.getBuiltinModule("node:net");
const nodeHttp = () => process.getBuiltinModule("node:http");

/** The base a request's target is read against: a unix socket has no host, as Bun.serve's answers had none. */
const URL_BASE = "http://localhost";

class Listener<T> implements UnixHttpListener {
  /** Made on the first connection: most tasks never call the API. */
  private open: Set<Socket> | undefined;

  constructor(
    readonly connection: Connection,
    readonly tag: T,
    private readonly server: Server,
  ) {}

  accepted(socket: Socket): void {
    const open = (this.open ??= new Set());
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.open ?? []) socket.destroy();
    });
  }
}

export const serveHttpUnix: ServeHttpUnix = serveOn;

function serveOn<T>(fetch: UnixFetch<T>): UnixHttpHost<T> {
  const bySocket = new WeakMap<Socket, Listener<T>>();
  const byServer = new WeakMap<Server, Listener<T>>();
  let http: HttpServer | undefined;
  const shared = (): HttpServer => {
    if (http) return http;
    // No timeouts: a blocking query or a followed log holds its request open for minutes.
    http = nodeHttp().createServer({ requestTimeout: 0 }, (req, res) => {
      const listener = bySocket.get(req.socket);
      if (!listener) return void res.writeHead(500).end();
      void answer(req, res, (request) => fetch(request, listener.connection, listener.tag));
    });
    http.timeout = 0;
    return http;
  };

  // One handler for every listener: `this` is the listener's server.
  function accept(this: Server, socket: Socket): void {
    const listener = byServer.get(this);
    if (!listener) return void socket.destroy();
    bySocket.set(socket, listener);
    listener.accepted(socket);
    shared().emit("connection", socket);
  }

  return {
    listen(path, tag) {
      const server = nodeNet().createServer();
      const listener = new Listener({ kind: "unix", path }, tag, server);
      byServer.set(server, listener);
      server.on("connection", accept);
      let failure: Error | undefined;
      const bindFailed = (err: Error) => (failure = err);
      server.once("error", bindFailed);
      // The bind is synchronous; only its error comes later, as an event.
      server.listen(path);
      if (!server.listening) {
        server.close();
        throw new Error(`cannot listen on ${path}${failure ? `: ${failure.message}` : ""}`);
      }
      // Bound: the shared handler takes later errors, so no closure of this call stays with the listener (issue 35).
      server.off("error", bindFailed).on("error", ignoreListenerError);
      return listener;
    },
  };
}

/**
 * A bound listener's later error: a failed accept, which node:net reports on the server and which
 * costs nothing but that connection. Without a handler node:net would throw it.
 */
function ignoreListenerError(): void {}

/** Runs `handle` on the request as a fetch Request and writes its Response back, stopping when the client goes. */
async function answer(req: IncomingMessage, res: ServerResponse, handle: (request: Request) => Response | Promise<Response>): Promise<void> {
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  let response: Response;
  try {
    response = await handle(toRequest(req, gone.signal));
  } catch {
    // The app answers its own errors; only a request that could not be read gets here.
    if (!res.headersSent) res.writeHead(400, { "content-type": "text/plain;charset=utf-8" });
    res.end("bad request");
    return;
  }
  await send(res, response, gone.signal);
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", URL_BASE).href, {
    method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

/**
 * Writes `response` to `res`. A body that is whole at once (every JSON
 * answer) goes with a Content-Length, as Bun.serve sent it; one still coming
 * (a followed log) goes chunked, each chunk as it comes.
 */
async function send(res: ServerResponse, response: Response, gone: AbortSignal): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  if (!response.body) {
    res.writeHead(response.status, headers).end();
    return;
  }
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  gone.addEventListener("abort", stop, { once: true });
  try {
    const first = await reader.read();
    const second = first.done ? undefined : reader.read();
    const settled = second ? await Promise.race([second, nextTurn()]) : first;
    if (settled?.done) {
      const body = first.done ? Buffer.alloc(0) : Buffer.from(first.value);
      if (!("content-length" in headers)) headers["content-length"] = String(body.byteLength);
      res.writeHead(response.status, headers).end(body);
      return;
    }
    res.writeHead(response.status, headers);
    let chunk = first;
    let pending = second;
    while (!chunk.done) {
      if (!res.write(chunk.value)) await drained(res);
      if (gone.aborted) return;
      chunk = await (pending ?? reader.read());
      pending = undefined;
    }
    res.end();
  } catch {
    // The body failed or the client went: nothing more can be said on this connection.
    res.destroy();
  } finally {
    gone.removeEventListener("abort", stop);
  }
}

/** Resolves after pending I/O callbacks: a body that has more now has handed it over by then. */
function nextTurn(): Promise<undefined> {
  return new Promise((resolve) => setImmediate(() => resolve(undefined)));
}

/** Resolves when `res` takes writes again, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
