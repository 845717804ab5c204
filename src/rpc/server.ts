/**
 * Serves a protocol on a unix socket. Parameters are validated against the
 * method's schema before its handler runs; a handler's exception becomes an
 * error response, never a crash of the serving process.
 */
import type * as v from "valibot";
import { parseOrThrow } from "../lib/validation.ts";
import { listenUnix, type Admission, type Connection, type UnixServer } from "../runtime/unix.ts";
import { LineBuffer, parseLine, type ParamsOf, type Protocol, type RpcRequest, type RpcResponse } from "./protocol.ts";

/**
 * The connection a request came on: a handler that starts something living
 * beyond its answer (an exec session) ties it to the caller's connection.
 */
export interface Peer {
  /** Runs `callback` once the connection is gone (at once if it already is). */
  onClose(callback: () => void): void;
}

export type Handlers<P extends Protocol> = {
  [M in keyof P]: (params: ParamsOf<P, M>, peer: Peer) => Promise<v.InferInput<P[M]["result"]>> | v.InferInput<P[M]["result"]>;
};

/** Optional hooks on connections coming and going (an executor counts its agents). */
export interface ConnectionEvents {
  open?(): void;
  close?(): void;
}

/** `admit` judges each connection's peer before it is served (peer-check.ts). */
export function serveRpc<P extends Protocol>(path: string, protocol: P, handlers: Handlers<P>, events: ConnectionEvents = {}, admit?: Admission): UnixServer {
  const states = new WeakMap<Connection, { lines: LineBuffer; peer: ConnectionPeer }>();
  const respond = (conn: Connection, response: RpcResponse) => conn.write(`${JSON.stringify(response)}\n`);

  async function handle(conn: Connection, peer: Peer, request: RpcRequest): Promise<void> {
    // Own keys only: "constructor" or "__proto__" name no method.
    const known = Object.hasOwn(protocol, request.method) && Object.hasOwn(handlers, request.method);
    const method = known ? protocol[request.method] : undefined;
    const handler = known ? (handlers as Record<string, (params: unknown, peer: Peer) => unknown>)[request.method] : undefined;
    if (!method || !handler) {
      respond(conn, { id: request.id, error: { message: `unknown method "${request.method}"` } });
      return;
    }
    try {
      const params = parseOrThrow(method.params, request.params ?? {}, `${request.method} params`);
      const result = await handler(params, peer);
      respond(conn, { id: request.id, result: result ?? null });
    } catch (err) {
      respond(conn, { id: request.id, error: { message: err instanceof Error ? err.message : String(err) } });
    }
  }

  return listenUnix(path, {
    open(conn) {
      states.set(conn, { lines: new LineBuffer(), peer: new ConnectionPeer() });
      events.open?.();
    },
    close(conn) {
      states.get(conn)?.peer.closed();
      events.close?.();
    },
    data(conn, chunk) {
      const state = states.get(conn)!;
      let lines: string[];
      try {
        lines = state.lines.push(chunk);
      } catch {
        conn.end();
        return;
      }
      for (const line of lines) {
        const request = parseLine(line, "request");
        if (request instanceof Error) {
          conn.end();
          return;
        }
        void handle(conn, state.peer, request);
      }
    },
  }, admit);
}

class ConnectionPeer implements Peer {
  private callbacks: (() => void)[] | null = [];

  onClose(callback: () => void): void {
    if (this.callbacks) this.callbacks.push(callback);
    else callback();
  }

  closed(): void {
    const callbacks = this.callbacks ?? [];
    this.callbacks = null;
    for (const callback of callbacks) callback();
  }
}
