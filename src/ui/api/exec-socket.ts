/**
 * Nomad's exec websocket, GET /v1/client/allocation/:id/exec, from the
 * browser: JSON frames with base64 bytes.
 *
 *   open ─> {"version":1,"auth_token"} ─> {"tty_size"} ─> what was sent before open
 *        ─> {"stdin":{"data"}} / {"tty_size"} ...
 *        ─> {"exited":true,"result":{"exit_code":N}}
 *     │ the agent refuses (the token may not exec, no such task): a close frame with the reason
 *
 * A browser's websocket cannot carry headers, so the token goes in the
 * handshake frame (`ws_handshake=true`), as Nomad's own UI sends it: never
 * in the URL, where logs and history would keep it.
 */
import { readToken } from "../acl/token.ts";
import { fromBase64, toBase64 } from "./base64.ts";

/** A quiet session still sends a frame this often, so proxies and the agent see it alive. */
export const HEARTBEAT_MS = 10_000;

export interface ExecHandlers {
  output(bytes: Uint8Array): void;
  exited(code: number): void;
  closed(reason: string): void;
}

export interface ExecSession {
  input(text: string): void;
  resize(columns: number, rows: number): void;
  close(): void;
}

export function execUrl(target: { allocId: string; namespace: string; task: string; command: string[] }, tty: boolean): string {
  const { allocId, namespace, task, command } = target;
  const query = new URLSearchParams({ namespace, task, tty: String(tty), command: JSON.stringify(command), ws_handshake: "true" });
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/v1/client/allocation/${encodeURIComponent(allocId)}/exec?${query}`;
}

export function openExec(url: string, size: { columns: number; rows: number }, handlers: ExecHandlers): ExecSession {
  const socket = new WebSocket(url);
  const encoder = new TextEncoder();
  let exited = false;
  // What the user types or resizes before the socket opens waits for it, as a terminal keeps
  // keystrokes typed ahead; it follows the handshake.
  const early: unknown[] = [];
  const send = (frame: unknown) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
    else if (socket.readyState === WebSocket.CONNECTING) early.push(frame);
  };
  const heartbeat = setInterval(() => {
    if (socket.readyState === WebSocket.OPEN) send({});
  }, HEARTBEAT_MS);
  socket.onopen = () => {
    const token = readToken();
    send(token ? { version: 1, auth_token: token } : { version: 1 });
    send({ tty_size: { width: size.columns, height: size.rows } });
    for (const frame of early.splice(0)) send(frame);
  };
  socket.onmessage = (event) => {
    const frame = JSON.parse(String(event.data)) as {
      stdout?: { data?: string };
      stderr?: { data?: string };
      exited?: boolean;
      result?: { exit_code?: number };
    };
    if (frame.stdout?.data) handlers.output(fromBase64(frame.stdout.data));
    if (frame.stderr?.data) handlers.output(fromBase64(frame.stderr.data));
    if (frame.exited) {
      exited = true;
      handlers.exited(frame.result?.exit_code ?? 0);
    }
  };
  socket.onclose = (event) => {
    clearInterval(heartbeat);
    if (!exited) handlers.closed(event.reason || (event.code === 1000 ? "the session ended" : `the connection closed (code ${event.code})`));
  };
  return {
    input: (text) => send({ stdin: { data: toBase64(encoder.encode(text)) } }),
    resize: (columns, rows) => send({ tty_size: { width: columns, height: rows } }),
    close: () => {
      clearInterval(heartbeat);
      socket.close(1000);
    },
  };
}
