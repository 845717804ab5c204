/**
 * Websockets on the HTTP API, through Hono's adapter for this runtime (Bun):
 * routes declare them with `upgradeWebSocket`, serve.ts hands the runtime
 * the matching handlers, and `liveSocket` reads what Hono's per-event
 * context does not keep current (whether the socket is open, how much it
 * still has to send).
 */
import type { ServerWebSocket } from "bun";
import { upgradeWebSocket, websocket } from "hono/bun";

export { upgradeWebSocket };

/** The handlers serve.ts gives Bun.serve for the upgraded connections. */
export const websocketHandlers = websocket;

export interface LiveSocket {
  isOpen(): boolean;
  /** Bytes queued and not yet taken by the peer. */
  bufferedBytes(): number;
}

/** `raw` is the `raw` of Hono's WSContext: the runtime's own socket. */
export function liveSocket(raw: unknown): LiveSocket {
  const socket = raw as ServerWebSocket<unknown>;
  const OPEN = 1;
  return {
    isOpen: () => socket.readyState === OPEN,
    bufferedBytes: () => socket.getBufferedAmount(),
  };
}
