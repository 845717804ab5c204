/**
 * GET /v1/client/allocation/:id/exec?command=["sh","-c","..."]&task=t&tty=true[&ws_handshake=true]
 *
 * Nomad's interactive exec over a websocket: structs/exec-stream.ts has the
 * frames, client/exec/relay.ts moves them between the socket and the
 * command. Malformed parameters are a 400 before the upgrade; a session that
 * cannot start is a close frame with Nomad's code and the reason, which
 * Nomad's CLI prints as "failed to exec into task: <reason>".
 *
 *   upgrade ─> [handshake frame] ─> session starts ─> frames both ways ─> exited frame ─> close 1000
 *                                      │ cannot                            client closes first
 *                                      └─> close 1008/1011, the reason     └─> the command is killed
 *
 * Frames that arrive while the session starts are kept and applied in order.
 */
import type { Hono } from "hono";
import * as v from "valibot";
import { TaskChoiceError, UnknownAllocError, type Client } from "../../client/client.ts";
import { relayExecSession, type ExecRelay } from "../../client/exec/relay.ts";
import { TaskNotRunningError } from "../../client/taskrunner/task-runner.ts";
import { liveSocket, upgradeWebSocket, type LiveSocket } from "../../runtime/websocket.ts";
import { GoBool } from "../../structs/common.ts";
import {
  ExecHandshakeSchema,
  ExecInputFrameSchema,
  WS_CLOSE_INTERNAL_ERROR,
  WS_CLOSE_NORMAL,
  WS_CLOSE_POLICY_VIOLATION,
  type ExecInputFrame,
  type ExecOutputFrame,
} from "../../structs/exec-stream.ts";
import type { Logger } from "../../lib/logger.ts";
import { ApiError } from "../errors.ts";

/**
 * Output queued on the socket beyond which reading the command's output
 * waits: a client that reads slowly then slows the command down (its pipe
 * fills) instead of the agent holding the difference in memory.
 */
const SEND_HIGH_WATER_BYTES = 1 << 20;
/** How often a send over the high water mark looks whether the client has caught up. */
const SEND_DRAIN_POLL_MS = 5;
/** A close frame's reason is at most 123 bytes (RFC 6455: 125 of payload, 2 of them the code). */
const CLOSE_REASON_MAX_BYTES = 123;

const Command = v.pipe(
  v.string("must be a JSON array of strings"),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return JSON.parse(dataset.value) as unknown;
    } catch {
      addIssue({ message: "must be a JSON array of strings" });
      return NEVER;
    }
  }),
  v.array(v.string(), "must be a JSON array of strings"),
  v.minLength(1, "command is not present"),
);

const ExecQuery = v.object({
  command: Command,
  task: v.optional(v.string(), ""),
  tty: v.optional(GoBool, "false"),
  ws_handshake: v.optional(GoBool, "false"),
});

function parseQuery(query: Record<string, string>) {
  const parsed = v.safeParse(ExecQuery, query);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  throw new ApiError(400, `${v.getDotPath(issue) ?? "query"}: ${issue.message}`);
}

/** A frame from the client that is not JSON or not one of Nomad's. */
class FrameError extends Error {
  override name = "FrameError";
}

/** Nomad's codes: the caller's mistakes are a policy violation, the agent's own failures an internal error. */
function closeCode(err: unknown): number {
  const callersMistake = [UnknownAllocError, TaskChoiceError, TaskNotRunningError, FrameError].some((kind) => err instanceof kind);
  return callersMistake ? WS_CLOSE_POLICY_VIOLATION : WS_CLOSE_INTERNAL_ERROR;
}

/** `text` cut to what a close frame carries, on a character boundary. */
function closeReason(text: string): string {
  let reason = text;
  while (Buffer.byteLength(reason) > CLOSE_REASON_MAX_BYTES) reason = reason.slice(0, -1);
  return reason;
}

function decodeFrame(data: unknown): unknown {
  const text = typeof data === "string" ? data : Buffer.from(data as ArrayBuffer).toString("utf8");
  return JSON.parse(text);
}

export function clientExecRoutes(client: Client, logger: Logger) {
  return (app: Hono) => {
    app.get(
      "/v1/client/allocation/:id/exec",
      upgradeWebSocket((c) => {
        const allocId = c.req.param("id") ?? "";
        const query = parseQuery(c.req.query());
        let socket: LiveSocket | null = null;
        let close: (code: number, reason: string) => void = () => {};
        let relay: ExecRelay | null = null;
        let clientGone = false;
        let awaitingHandshake = query.ws_handshake;
        const early: ExecInputFrame[] = [];

        let sendText: (text: string) => void = () => {};
        const send = async (frame: ExecOutputFrame) => {
          if (!socket?.isOpen()) return;
          sendText(JSON.stringify(frame));
          while (socket.isOpen() && socket.bufferedBytes() > SEND_HIGH_WATER_BYTES) await new Promise((resolve) => setTimeout(resolve, SEND_DRAIN_POLL_MS));
        };

        const fail = (err: unknown) => {
          const message = err instanceof Error ? err.message : String(err);
          if (closeCode(err) === WS_CLOSE_INTERNAL_ERROR) logger.warn({ err, alloc_id: allocId, task: query.task }, "exec session failed");
          close(closeCode(err), closeReason(message));
        };

        const start = async () => {
          let session;
          try {
            session = await client.execStreamInAlloc(allocId, query.task, query.command, query.tty);
          } catch (err) {
            fail(err);
            return;
          }
          logger.info({ alloc_id: allocId, task: query.task, command: query.command, tty: query.tty, pid: session.pid }, "exec session started");
          relay = relayExecSession(session, send);
          if (clientGone) relay.hangUp();
          for (const frame of early.splice(0)) relay.input(frame);
          const pid = session.pid;
          relay.done.then(
            () => {
              logger.info({ alloc_id: allocId, task: query.task, pid, client_gone: clientGone }, "exec session ended");
              close(WS_CLOSE_NORMAL, "");
            },
            (err: unknown) => fail(err),
          );
        };

        return {
          onOpen(_event, ws) {
            socket = liveSocket(ws.raw);
            sendText = (text) => ws.send(text);
            close = (code, reason) => {
              if (socket?.isOpen()) ws.close(code, reason);
            };
            if (!awaitingHandshake) void start();
          },
          onMessage(event) {
            try {
              const json = decodeFrame(event.data);
              if (awaitingHandshake) {
                v.parse(ExecHandshakeSchema, json);
                awaitingHandshake = false;
                void start();
                return;
              }
              const frame = v.parse(ExecInputFrameSchema, json);
              if (relay) relay.input(frame);
              else early.push(frame);
            } catch (err) {
              fail(new FrameError(`malformed frame: ${err instanceof v.ValiError ? v.summarize(err.issues) : (err as Error).message}`));
            }
          },
          onClose() {
            clientGone = true;
            socket = null;
            relay?.hangUp();
          },
        };
      }),
    );
  };
}
