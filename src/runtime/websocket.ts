/**
 * Websockets on the HTTP API, through Hono's adapter for the runtime that
 * serves it: routes declare them with `upgradeWebSocket`, and `liveSocket`
 * reads what Hono's per-event context does not keep current (whether the
 * socket is open, how much it still has to send) from the runtime's own
 * socket.
 */
import type { UpgradeWebSocket } from "hono/ws";

export interface LiveSocket {
  isOpen(): boolean;
  /** Bytes queued and not yet taken by the peer. */
  bufferedBytes(): number;
}

/** `raw` is the `raw` of Hono's WSContext: the runtime's own socket. */
export type LiveSocketOf = (raw: unknown) => LiveSocket;

export type { UpgradeWebSocket };

export { liveSocket, upgradeWebSocket } from "@drover/runtime/websocket.ts";
