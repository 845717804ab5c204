/**
 * runtime/websocket.ts on Bun: hono/bun's adapter. Bun.serve takes the
 * upgraded connections' handlers (bun/serve.ts), and the raw socket is Bun's
 * ServerWebSocket.
 */
import type { ServerWebSocket } from "bun";
import { upgradeWebSocket as bunUpgradeWebSocket, websocket } from "hono/bun";
import type { LiveSocketOf, UpgradeWebSocket } from "../websocket.ts";

export const upgradeWebSocket: UpgradeWebSocket = bunUpgradeWebSocket;

/** The handlers serve.ts gives Bun.serve for the upgraded connections. */
export const websocketHandlers = websocket;

export const liveSocket: LiveSocketOf = (raw) => {
  const socket = raw as ServerWebSocket<unknown>;
  const OPEN = 1;
  return {
    isOpen: () => socket.readyState === OPEN,
    bufferedBytes: () => socket.getBufferedAmount(),
  };
};
