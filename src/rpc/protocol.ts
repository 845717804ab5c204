/**
 * The wire shape shared by every internal RPC (agent <-> executor, agent <->
 * logmon): one JSON object per line over a unix socket.
 *
 *   request   {"id": 7, "method": "wait", "params": {...}}
 *   response  {"id": 7, "result": {...}}  or  {"id": 7, "error": {"message": "..."}}
 *
 * A protocol is a table of methods, each a request/response pair of valibot
 * schemas; client and server are typed from the same table.
 */
import * as v from "valibot";
import { BYTES_PER_MIB } from "../lib/units.ts";

type AnySchema = v.GenericSchema;

export interface MethodSchemas {
  params: AnySchema;
  result: AnySchema;
}

export type Protocol = Record<string, MethodSchemas>;

export type ParamsOf<P extends Protocol, M extends keyof P> = v.InferOutput<P[M]["params"]>;
export type ResultOf<P extends Protocol, M extends keyof P> = v.InferOutput<P[M]["result"]>;

const RpcRequestSchema = v.object({ id: v.number(), method: v.string(), params: v.optional(v.unknown()) });
const RpcResponseSchema = v.object({
  id: v.number(),
  result: v.optional(v.unknown()),
  error: v.optional(v.object({ message: v.string() })),
});

export type RpcRequest = v.InferOutput<typeof RpcRequestSchema>;
export type RpcResponse = v.InferOutput<typeof RpcResponseSchema>;

/**
 * One line read off the socket as a request (server side) or a response
 * (client side). Either side ends a connection whose peer sends anything
 * else: an error thrown out of a socket callback would take the whole
 * process down, and that process may be a task's executor.
 */
export function parseLine(line: string, kind: "request"): RpcRequest | Error;
export function parseLine(line: string, kind: "response"): RpcResponse | Error;
export function parseLine(line: string, kind: "request" | "response"): RpcRequest | RpcResponse | Error {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (err) {
    return new Error(`malformed RPC ${kind}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = v.safeParse(kind === "request" ? RpcRequestSchema : RpcResponseSchema, json);
  return parsed.success ? parsed.output : new Error(`malformed RPC ${kind}: ${v.summarize(parsed.issues)}`);
}

/** Longest line either side accepts; exec output and stats stay far below it. */
export const MAX_LINE_BYTES = 32 * BYTES_PER_MIB;

/**
 * Splits a stream of text into lines. Returns the complete lines and keeps the
 * partial tail for the next chunk. The tail is kept in pieces until a newline
 * ends it: splitting the whole tail again on every chunk made a long line
 * (an exec's output) cost quadratic time on the agent's only thread.
 */
export class LineBuffer {
  private tail: string[] = [];
  private tailLength = 0;

  push(chunk: string): string[] {
    const lastNewline = chunk.lastIndexOf("\n");
    if (lastNewline < 0) {
      this.keep(chunk);
      return [];
    }
    this.tail.push(chunk.slice(0, lastNewline));
    const lines = this.tail.join("").split("\n");
    this.tail = [];
    this.tailLength = 0;
    this.keep(chunk.slice(lastNewline + 1));
    return lines.filter((line) => line.length > 0);
  }

  private keep(piece: string): void {
    if (piece.length === 0) return;
    this.tail.push(piece);
    this.tailLength += piece.length;
    if (this.tailLength > MAX_LINE_BYTES) throw new Error(`RPC line longer than ${MAX_LINE_BYTES} bytes`);
  }
}
