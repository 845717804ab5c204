/**
 * Stream sockets on a unix path: the agent's line to its executors and its
 * log pump. Text in, text out; the runtime's half does the bytes.
 */
import type { PeerCredentials } from "./libc.ts";

/** sun_path is 108 bytes including the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

export interface Connection {
  /** Queues `data`; bytes the kernel did not take yet go out as it drains. */
  write(data: string): void;
  end(): void;
}

export interface ConnectionHandlers {
  open?(conn: Connection): void;
  data(conn: Connection, chunk: string): void;
  close?(conn: Connection): void;
}

export interface UnixServer {
  stop(): void;
}

/**
 * Who may use a listening socket: given the peer's credentials (null when
 * the kernel gave none), a reason to refuse it, or null to let it in.
 */
export type Admission = (peer: PeerCredentials | null) => string | null;

/**
 * Listens on `path` (which must not exist), the socket file its owner's
 * alone. With `admit`, each connection is judged by its peer's credentials
 * (SO_PEERCRED) before it is served; on Deno, whose connections show no
 * descriptor to ask, the socket's and its directory's modes are the guard.
 */
export type ListenUnix = (path: string, handlers: ConnectionHandlers, admit?: Admission) => UnixServer;

/** Connects to `path`; rejects when nothing listens there. */
export type ConnectUnix = (path: string, handlers: ConnectionHandlers) => Promise<Connection>;

export { connectUnix, listenUnix } from "@drover/runtime/unix.ts";
