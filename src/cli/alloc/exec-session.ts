/**
 * The terminal's side of `alloc exec`: this process's stdin, stdout and
 * stderr against the agent's exec websocket, in Nomad's frames
 * (structs/exec-stream.ts).
 *
 *   connect ─> [terminal: raw mode, send the window size, again on SIGWINCH]
 *           ─> stdin chunks as frames (its end as a close frame); a heartbeat every 10 s
 *           <─ stdout / stderr frames written as they come
 *           <─ exited frame: restore the terminal, exit with the command's code
 *   the agent closes with a reason: that reason is the error
 *   Ctrl-C (without a terminal), SIGTERM or the escape "~.": hang up, which ends the command
 */
import * as v from "valibot";
import { ExecOutputFrameSchema, type ExecInputFrame } from "../../structs/exec-stream.ts";
import { AgentError, AgentUnreachableError } from "../http-client.ts";
import type { Io } from "../command.ts";
import { makeRawTerminal } from "../../runtime/libc.ts";

const STDIN_FD = 0;

/** Nomad's client sends an empty frame this often, so that idle sessions stay open through proxies. */
const HEARTBEAT_MS = 10_000;

export interface SessionOptions {
  tty: boolean;
  /** Pass this process's stdin; when false the command's stdin is closed at once. */
  stdin: boolean;
  /** The escape character of a terminal session, or null for none. */
  escape: string | null;
}

/** `socket`: the agent's exec websocket, just opened (AgentClient.websocket); `address` names the agent in errors. */
export async function runExecSession(socket: WebSocket, address: string, options: SessionOptions, io: Io): Promise<number> {
  const send = (frame: ExecInputFrame) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  };
  const cleanups: (() => void)[] = [];
  try {
    return await new Promise<number>((resolve, reject) => {
      let opened = false;
      let exitCode: number | null = null;
      /** Why this side hung up, when it did. */
      let hungUp: string | null = null;
      socket.addEventListener("open", () => {
        opened = true;
        const hangUp = (why: string) => {
          hungUp = why;
          socket.close();
        };
        cleanups.push(...startInput(send, options, hangUp));
        const heartbeat = setInterval(() => send({}), HEARTBEAT_MS);
        cleanups.push(() => clearInterval(heartbeat));
      });
      socket.addEventListener("message", (event) => {
        let frame;
        try {
          frame = v.parse(ExecOutputFrameSchema, JSON.parse(String(event.data)));
        } catch (err) {
          reject(new AgentError(0, `the agent sent a malformed frame: ${err instanceof v.ValiError ? v.summarize(err.issues) : (err as Error).message}`));
          socket.close();
          return;
        }
        if (frame.stdout?.data) io.write(Buffer.from(frame.stdout.data, "base64"));
        if (frame.stderr?.data) process.stderr.write(Buffer.from(frame.stderr.data, "base64"));
        if (frame.exited && frame.result) {
          exitCode = frame.result.exit_code;
          resolve(exitCode);
          socket.close();
        }
      });
      socket.addEventListener("close", (event) => {
        if (exitCode !== null) return;
        if (!opened) reject(new AgentUnreachableError(`cannot open the exec session at ${address}${event.reason ? `: ${event.reason}` : ""}`));
        else if (hungUp) reject(new AgentError(event.code, `${hungUp}; the command was ended with the session`));
        else reject(new AgentError(event.code, event.reason || "disconnected without receiving the exit code"));
      });
    });
  } finally {
    for (const cleanup of cleanups.reverse()) cleanup();
  }
}

/** Starts forwarding input (stdin, window sizes, signals); returns what undoes it. */
function startInput(send: (frame: ExecInputFrame) => void, options: SessionOptions, hangUp: (why: string) => void): (() => void)[] {
  const cleanups: (() => void)[] = [];
  // With a terminal, Ctrl-C is a byte for the command; SIGINT then only comes from elsewhere.
  const onInterrupt = () => hangUp("interrupted");
  const onTerminate = () => hangUp("terminated");
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onTerminate);
  cleanups.push(() => {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onTerminate);
  });

  if (options.tty) {
    // Raw in and out, as Nomad's CLI has it: output processing off, or a "\n" the command sends would come out as "\r\n".
    cleanups.push(makeRawTerminal(STDIN_FD));
    const sendSize = () => send({ tty_size: { height: process.stdout.rows ?? 0, width: process.stdout.columns ?? 0 } });
    sendSize();
    process.stdout.on("resize", sendSize);
    cleanups.push(() => process.stdout.off("resize", sendSize));
  }

  if (!options.stdin) {
    send({ stdin: { close: true } });
    return cleanups;
  }
  const escape = options.tty && options.escape !== null ? escapeFilter(options.escape.charCodeAt(0), () => {
    // Raw mode: a line break needs its carriage return.
    process.stderr.write("\r\n");
    hangUp(`${options.escape}. typed`);
  }) : (chunk: Uint8Array) => chunk;
  const onData = (chunk: Buffer) => {
    const data = escape(chunk);
    if (data.length > 0) send({ stdin: { data: Buffer.from(data).toString("base64") } });
  };
  const onEnd = () => send({ stdin: { close: true } });
  process.stdin.on("data", onData);
  process.stdin.on("end", onEnd);
  cleanups.push(() => {
    process.stdin.off("data", onData);
    process.stdin.off("end", onEnd);
    // Stop reading so the process can exit.
    process.stdin.pause();
  });
  return cleanups;
}

/**
 * Nomad's (and ssh's) escape: `escape` at the start of a line is held back;
 * followed by "." it closes the connection, followed by itself it sends one,
 * followed by anything else it sends both.
 */
export function escapeFilter(escape: number, onClose: () => void): (chunk: Uint8Array) => Uint8Array {
  let lineStart = true;
  let held = false;
  const DOT = 0x2e;
  const isNewline = (byte: number) => byte === 0x0d || byte === 0x0a;
  return (chunk) => {
    const out: number[] = [];
    for (const byte of chunk) {
      if (held) {
        held = false;
        if (byte === DOT) {
          onClose();
          return Uint8Array.from(out);
        }
        if (byte !== escape) out.push(escape);
        out.push(byte);
      } else if (lineStart && byte === escape) {
        held = true;
        continue;
      } else {
        out.push(byte);
      }
      lineStart = isNewline(byte);
    }
    return Uint8Array.from(out);
  };
}
