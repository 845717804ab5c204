/**
 * Nomad's interactive exec protocol: the JSON frames of the websocket at
 * GET /v1/client/allocation/:id/exec (api.ExecStreamingInput and
 * api.ExecStreamingOutput). Bytes are base64, as Go writes a []byte.
 *
 *   client -> agent   {"stdin":{"data":"aGkK"}}  {"stdin":{"close":true}}
 *                     {"tty_size":{"height":40,"width":120}}  {} (heartbeat)
 *   agent -> client   {"stdout":{"data":"..."}}  {"stderr":{"data":"..."}}
 *                     {"stdout":{"close":true}}  {"exited":true,"result":{"exit_code":0}}
 *
 * With `ws_handshake=true` the client's first frame is {"version":1,"auth_token":"..."}.
 */
import * as v from "valibot";
import { NonNegativeInt } from "./common.ts";

const Base64 = v.pipe(v.string(), v.regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64"));

const IoOperation = v.object({
  data: v.optional(Base64),
  close: v.optional(v.boolean()),
});

/** A terminal dimension: Go's int, in practice what a winsize's unsigned short holds. */
const Cells = v.pipe(NonNegativeInt, v.maxValue(0xffff, "must be at most 65535"));

export const ExecInputFrameSchema = v.object({
  stdin: v.optional(IoOperation),
  tty_size: v.optional(v.object({ height: v.optional(Cells, 0), width: v.optional(Cells, 0) })),
});
export type ExecInputFrame = v.InferOutput<typeof ExecInputFrameSchema>;

export const ExecOutputFrameSchema = v.object({
  stdout: v.optional(IoOperation),
  stderr: v.optional(IoOperation),
  exited: v.optional(v.boolean()),
  result: v.optional(v.object({ exit_code: v.number() })),
});
export type ExecOutputFrame = v.InferOutput<typeof ExecOutputFrameSchema>;

/** The websocket handshake frame of Nomad 1.x clients (the web UI): with ACLs, its token is judged (api/acl/caller.ts). */
export const ExecHandshakeSchema = v.object({
  version: v.literal(1, "unexpected handshake version"),
  auth_token: v.optional(v.string()),
});

/**
 * Websocket close codes for a session that cannot start, as Nomad maps its
 * errors: 1008 (policy violation) for the caller's mistakes (no such alloc
 * or task, task not running), 1011 (internal error) for the agent's own.
 */
export const WS_CLOSE_NORMAL = 1000;
export const WS_CLOSE_POLICY_VIOLATION = 1008;
export const WS_CLOSE_INTERNAL_ERROR = 1011;
