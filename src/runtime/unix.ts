/**
 * Stream sockets on a unix path: the agent's line to its executors and its
 * log pump. Text in, text out; the runtime's half does the bytes.
 */

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

/** Listens on `path` (which must not exist). */
export type ListenUnix = (path: string, handlers: ConnectionHandlers) => UnixServer;

/** Connects to `path`; rejects when nothing listens there. */
export type ConnectUnix = (path: string, handlers: ConnectionHandlers) => Promise<Connection>;

export { connectUnix, listenUnix } from "@drover/runtime/unix.ts";
