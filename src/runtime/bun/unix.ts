/**
 * runtime/unix.ts on Bun: Bun.listen/Bun.connect cost far less memory than
 * node:net, which matters in a process that exists once per task.
 */
import type { Socket } from "bun";
import { peerCredentials } from "../libc.ts";
import type { Admission, Connection, ConnectionHandlers, ConnectUnix, ListenUnix } from "../unix.ts";

interface State {
  conn: Connection;
  pending: Uint8Array[];
  /** The connection's own: a character split between two reads is held until its rest arrives. */
  decoder: TextDecoder;
}

const encoder = new TextEncoder();

function makeConnection(socket: Socket<State>, state: { pending: Uint8Array[] }): Connection {
  return {
    write(data) {
      const bytes = encoder.encode(data);
      if (state.pending.length > 0) {
        state.pending.push(bytes);
        return;
      }
      const written = socket.write(bytes);
      if (written < bytes.length) state.pending.push(bytes.subarray(Math.max(written, 0)));
    },
    end() {
      socket.end();
    },
  };
}

function flush(socket: Socket<State>): void {
  const pending = socket.data.pending;
  while (pending.length > 0) {
    const head = pending[0]!;
    const written = socket.write(head);
    if (written < head.length) {
      pending[0] = head.subarray(Math.max(written, 0));
      return;
    }
    pending.shift();
  }
}

/** Bun's sockets have their descriptor at run time; its types leave it out. */
const descriptorOf = (socket: Socket<State>) => (socket as unknown as { fd: number }).fd;

function socketHandlers(handlers: ConnectionHandlers, admit?: Admission) {
  return {
    open(socket: Socket<State>) {
      if (admit && admit(peerCredentials(descriptorOf(socket))) !== null) {
        // Refused before a byte is read: the peer sees the connection close.
        socket.terminate();
        return;
      }
      const state: State = { pending: [], conn: undefined as unknown as Connection, decoder: new TextDecoder() };
      state.conn = makeConnection(socket, state);
      socket.data = state;
      handlers.open?.(state.conn);
    },
    data(socket: Socket<State>, data: Uint8Array) {
      if (!socket.data) return;
      const text = socket.data.decoder.decode(data, { stream: true });
      handlers.data(socket.data.conn, text);
    },
    drain(socket: Socket<State>) {
      if (socket.data) flush(socket);
    },
    close(socket: Socket<State>) {
      if (socket.data) handlers.close?.(socket.data.conn);
    },
    error(socket: Socket<State>) {
      socket.end();
    },
  };
}

export const listenUnix: ListenUnix = (path, handlers, admit) => {
  // The socket file is made with the umask's mode: owner only, whatever the process's umask is.
  const umask = process.umask(0o077);
  try {
    const listener = Bun.listen<State>({ unix: path, socket: socketHandlers(handlers, admit) });
    return { stop: () => listener.stop(true) };
  } finally {
    process.umask(umask);
  }
};

export const connectUnix: ConnectUnix = async (path, handlers) => {
  let connection: Connection | undefined;
  const wrapped: ConnectionHandlers = {
    ...handlers,
    open(conn) {
      connection = conn;
      handlers.open?.(conn);
    },
  };
  const socket = await Bun.connect<State>({ unix: path, socket: socketHandlers(wrapped) });
  return connection ?? socket.data.conn;
};
