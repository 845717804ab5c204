/**
 * GET /v1/client/allocation/:id/exec?command=["sh","-c","..."]&task=t&tty=true[&ws_handshake=true]
 *
 * Nomad's interactive exec over a websocket: structs/exec-stream.ts has the
 * frames, client/exec/relay.ts moves them between the socket and the
 * command. Malformed parameters are a 400 before the upgrade; a session that
 * cannot start is a close frame with Nomad's code and the reason, which
 * Nomad's CLI prints as "failed to exec into task: <reason>".
 *
 *   upgrade ─> [handshake frame] ─> ACLs ─> session starts ─> frames both ways ─> exited frame ─> close 1000
 *                                      │ denied │ cannot                    client closes first
 *                                      └────────┴─> close 1008/1011,      └─> the command is killed
 *                                                   the reason
 *
 * With ACLs, a token in the headers was judged before the upgrade (alloc-exec);
 * one in the handshake frame (what Nomad's web UI sends) is judged here.
 * Either way a task without filesystem isolation (raw_exec) also needs
 * alloc-node-exec.
 *
 * Frames that arrive while the session starts are kept and applied in order.
 */
import type { Context, Hono } from "hono";
import type { WSContext } from "hono/ws";
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
import { PERMISSION_DENIED } from "../../acl/resolver.ts";
import { authorizeHandshake } from "../acl/caller.ts";
import { mayExecInto } from "../acl/node-exec.ts";
import { parseQuery } from "../errors.ts";
import { ExecArgSchema, MAX_EXEC_ARGS } from "../../structs/api.ts";

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
  v.array(ExecArgSchema, "must be a JSON array of strings"),
  v.minLength(1, "command is not present"),
  v.maxLength(MAX_EXEC_ARGS, `must have at most ${MAX_EXEC_ARGS} arguments`),
);

const ExecQuery = v.object({
  command: Command,
  task: v.optional(v.string(), ""),
  tty: v.optional(GoBool, "false"),
  ws_handshake: v.optional(GoBool, "false"),
});

/** A frame from the client that is not JSON or not one of Nomad's. */
class FrameError extends Error {
  override name = "FrameError";
}

/** The caller may not exec here (its token, or the task's lack of isolation). */
class DeniedError extends Error {
  override name = "DeniedError";
}

/** Nomad's codes: the caller's mistakes are a policy violation, the agent's own failures an internal error. */
function closeCode(err: unknown): number {
  const callersMistake = [UnknownAllocError, TaskChoiceError, TaskNotRunningError, FrameError, DeniedError].some((kind) => err instanceof kind);
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

type ExecQuery = v.InferOutput<typeof ExecQuery>;

/** One websocket's session, from the upgrade to the close (the diagram above). */
class SocketSession {
  private ws: WSContext | null = null;
  private socket: LiveSocket | null = null;
  private relay: ExecRelay | null = null;
  private clientGone = false;
  private awaitingHandshake: boolean;
  /** Frames that came before the session started. */
  private readonly early: ExecInputFrame[] = [];

  constructor(
    private readonly client: Client,
    private readonly logger: Logger,
    private readonly allocId: string,
    private readonly query: ExecQuery,
    /** The request, whose caller the ACL guard judged (or leaves to the handshake). */
    private readonly request: Context,
  ) {
    this.awaitingHandshake = query.ws_handshake;
  }

  opened(ws: WSContext): void {
    this.ws = ws;
    this.socket = liveSocket(ws.raw);
    if (!this.awaitingHandshake) void this.start();
  }

  message(data: unknown): void {
    let frame: ExecInputFrame;
    try {
      const json = decodeFrame(data);
      if (this.awaitingHandshake) {
        const handshake = v.parse(ExecHandshakeSchema, json);
        this.awaitingHandshake = false;
        void this.start(handshake.auth_token);
        return;
      }
      frame = v.parse(ExecInputFrameSchema, json);
    } catch (err) {
      this.fail(new FrameError(`malformed frame: ${err instanceof v.ValiError ? v.summarize(err.issues) : (err as Error).message}`));
      return;
    }
    if (!this.relay) this.early.push(frame);
    else this.input(frame);
  }

  closed(): void {
    this.clientGone = true;
    this.socket = null;
    this.relay?.hangUp();
  }

  /** `secret`: the handshake frame's token, if it sent one. */
  private async start(secret?: string): Promise<void> {
    const { allocId, query } = this;
    const session = await this.authorized(secret)
      .then(() => this.client.execStreamInAlloc(allocId, query.task, query.command, query.tty))
      .catch((err: unknown) => {
        this.fail(err);
        return null;
      });
    if (!session) return;
    this.logger.info({ alloc_id: allocId, task: query.task, command: query.command, tty: query.tty, pid: session.pid }, "exec session started");
    this.relay = relayExecSession(session, (frame) => this.send(frame));
    if (this.clientGone) this.relay.hangUp();
    for (const frame of this.early.splice(0)) this.input(frame);
    this.relay.done.then(
      () => {
        this.logger.info({ alloc_id: allocId, task: query.task, pid: session.pid, client_gone: this.clientGone }, "exec session ended");
        this.close(WS_CLOSE_NORMAL, "");
      },
      (err: unknown) => this.fail(err),
    );
  }

  /** Throws a DeniedError unless the caller may exec into the target task. */
  private async authorized(secret: string | undefined): Promise<void> {
    const caller = await authorizeHandshake(this.request, secret);
    if (typeof caller === "string") throw new DeniedError(caller);
    const target = this.client.execTarget(this.allocId, this.query.task);
    if (!mayExecInto(caller, target)) throw new DeniedError(PERMISSION_DENIED);
  }

  private input(frame: ExecInputFrame): void {
    try {
      this.relay!.input(frame);
    } catch (err) {
      this.fail(err);
    }
  }

  private async send(frame: ExecOutputFrame): Promise<void> {
    const socket = this.socket;
    if (!socket?.isOpen()) return;
    this.ws!.send(JSON.stringify(frame));
    while (socket.isOpen() && socket.bufferedBytes() > SEND_HIGH_WATER_BYTES) await new Promise((resolve) => setTimeout(resolve, SEND_DRAIN_POLL_MS));
  }

  private fail(err: unknown): void {
    const code = closeCode(err);
    if (code === WS_CLOSE_INTERNAL_ERROR) this.logger.warn({ err, alloc_id: this.allocId, task: this.query.task }, "exec session failed");
    this.close(code, closeReason(err instanceof Error ? err.message : String(err)));
  }

  private close(code: number, reason: string): void {
    if (this.socket?.isOpen()) this.ws!.close(code, reason);
  }
}

export function clientExecRoutes(client: Client, logger: Logger) {
  return (app: Hono) => {
    app.get(
      "/v1/client/allocation/:id/exec",
      upgradeWebSocket((c) => {
        const session = new SocketSession(client, logger, c.req.param("id") ?? "", parseQuery(ExecQuery, c.req.query()), c);
        return {
          onOpen: (_event, ws) => session.opened(ws),
          onMessage: (event) => session.message(event.data),
          onClose: () => session.closed(),
        };
      }),
    );
  };
}
