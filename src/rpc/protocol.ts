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
import type * as v from "valibot";

type AnySchema = v.GenericSchema;

export interface MethodSchemas {
  params: AnySchema;
  result: AnySchema;
}

export type Protocol = Record<string, MethodSchemas>;

export type ParamsOf<P extends Protocol, M extends keyof P> = v.InferOutput<P[M]["params"]>;
export type ResultOf<P extends Protocol, M extends keyof P> = v.InferOutput<P[M]["result"]>;

export interface RpcRequest {
  id: number;
  method: string;
  params: unknown;
}

export interface RpcResponse {
  id: number;
  result?: unknown;
  error?: { message: string };
}

/** Longest line either side accepts; exec output and stats stay far below it. */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/**
 * Splits a stream of text into lines. Returns the complete lines and keeps the
 * partial tail for the next chunk.
 */
export class LineBuffer {
  private tail = "";

  push(chunk: string): string[] {
    const text = this.tail + chunk;
    const lines = text.split("\n");
    this.tail = lines.pop() ?? "";
    if (this.tail.length > MAX_LINE_BYTES) throw new Error(`RPC line longer than ${MAX_LINE_BYTES} bytes`);
    return lines.filter((line) => line.length > 0);
  }
}
