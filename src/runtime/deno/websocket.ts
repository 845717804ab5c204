/** runtime/websocket.ts on Deno: hono/deno's adapter; the raw socket is the standard WebSocket Deno.upgradeWebSocket returns. */
import { upgradeWebSocket as denoUpgradeWebSocket } from "hono/deno";
import type { LiveSocketOf, UpgradeWebSocket } from "../websocket.ts";

export const upgradeWebSocket: UpgradeWebSocket = denoUpgradeWebSocket;

export const liveSocket: LiveSocketOf = (raw) => {
  const socket = raw as WebSocket;
  return {
    isOpen: () => socket.readyState === WebSocket.OPEN,
    bufferedBytes: () => socket.bufferedAmount,
  };
};
