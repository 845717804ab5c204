/**
 * runtime/unix.ts on Deno: Deno.listen/Deno.connect with the unix transport.
 * Writes are chained, so each goes out whole and in order; the read loop hands
 * text to the handlers as it arrives and reports the close once.
 */
import type { Connection, ConnectionHandlers, ConnectUnix, ListenUnix } from "../unix.ts";

/** Bytes asked of the socket per read: an RPC line is small; a stats answer a few KiB. */
const READ_CHUNK_BYTES = 64 * 1024;

const encoder = new TextEncoder();

async function writeAll(socket: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.length; ) done += await socket.write(bytes.subarray(done));
}

/** Wraps `socket`, calls `open`, and reads until the peer or `end()` closes it. */
function attach(socket: Deno.Conn, handlers: ConnectionHandlers, onClose?: () => void): Connection {
  let writes = Promise.resolve();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      socket.close();
    } catch {
      // Already closed by the read loop's end.
    }
  };
  const conn: Connection = {
    write(data) {
      if (closed) return;
      const bytes = encoder.encode(data);
      writes = writes.then(() => writeAll(socket, bytes)).catch(close);
    },
    end() {
      writes = writes.then(close);
    },
  };
  handlers.open?.(conn);
  void (async () => {
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(READ_CHUNK_BYTES);
    try {
      for (let n = await socket.read(buffer); n !== null; n = await socket.read(buffer)) {
        handlers.data(conn, decoder.decode(buffer.subarray(0, n), { stream: true }));
      }
    } catch {
      // Reset by the peer, or closed by end(): either way the connection is over.
    } finally {
      close();
      onClose?.();
      handlers.close?.(conn);
    }
  })();
  return conn;
}

export const listenUnix: ListenUnix = (path, handlers) => {
  const listener = Deno.listen({ transport: "unix", path });
  // The owner's alone; a Deno.Conn shows no descriptor to ask SO_PEERCRED of, so `admit` cannot be applied here.
  Deno.chmodSync(path, 0o600);
  const open = new Set<Deno.Conn>();
  void (async () => {
    try {
      for await (const socket of listener) {
        open.add(socket);
        attach(socket, handlers, () => open.delete(socket));
      }
    } catch {
      // The listener was closed by stop().
    }
  })();
  return {
    stop() {
      listener.close();
      for (const socket of open) {
        try {
          socket.close();
        } catch {
          // Closed meanwhile.
        }
      }
    },
  };
};

export const connectUnix: ConnectUnix = async (path, handlers) => attach(await Deno.connect({ transport: "unix", path }), handlers);
