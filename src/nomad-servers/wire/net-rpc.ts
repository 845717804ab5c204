/**
 * Go's net/rpc over one yamux stream, with Nomad's msgpack codec
 * (net-rpc-msgpackrpc): a request is a header {ServiceMethod, Seq} followed
 * by the args, a reply a header {ServiceMethod, Seq, Error} followed by the
 * body, each a bare msgpack value with no length prefix. Calls on one stream
 * go one at a time: a blocking query holds its stream until it answers.
 */
import type { Stream } from "@libp2p/interface";
import { decodeGoStream, encodeGo } from "./msgpack.ts";

/** The server answered with an error string (Nomad's errors travel as text). */
export class RpcError extends Error {
  override name = "RpcError";
}

const text = new TextDecoder();

function asText(value: unknown): string {
  if (value instanceof Uint8Array) return text.decode(value);
  return typeof value === "string" ? value : "";
}

async function* bytesOf(stream: Stream): AsyncGenerator<Uint8Array> {
  for await (const chunk of stream) yield chunk instanceof Uint8Array ? chunk : chunk.subarray();
}

/** The stream's bytes after its type byte, which must be `type`. */
async function* afterTypeByte(stream: Stream, type: number): AsyncGenerator<Uint8Array> {
  let first = true;
  for await (const bytes of bytesOf(stream)) {
    if (first) {
      first = false;
      if (bytes[0] !== type) throw new Error(`stream type ${bytes[0]} is not served here`);
      if (bytes.length > 1) yield bytes.subarray(1);
      continue;
    }
    yield bytes;
  }
}

/** Answers one call: Go's reply, or an error whose message the caller sees. */
export type RpcHandler = (method: string, args: unknown) => Promise<unknown>;

/**
 * Serves net/rpc calls on a stream the server opened, once its type byte
 * says net/rpc, until the server closes it. Nomad's server sends one call
 * per stream when it forwards a request to a client.
 */
export async function serveRpcStream(stream: Stream, type: number, handler: RpcHandler): Promise<void> {
  const values = decodeGoStream(afterTypeByte(stream, type));
  try {
    for (;;) {
      const header = await values.next();
      if (header.done) break;
      const body = await values.next();
      if (body.done) break;
      const fields = (typeof header.value === "object" && header.value !== null ? header.value : {}) as Record<string, unknown>;
      const method = asText(fields.ServiceMethod);
      let reply: unknown = {};
      let error = "";
      try {
        reply = await handler(method, body.value);
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
        reply = {};
      }
      stream.send(encodeGo({ ServiceMethod: method, Seq: fields.Seq, Error: error }));
      stream.send(encodeGo(reply));
    }
  } catch (err) {
    // Another kind of stream, or the server went away mid-call: it reports the failure on its side.
    stream.abort(err instanceof Error ? err : new Error(String(err)));
    return;
  }
  void stream.close().catch(() => undefined);
}

export class RpcStream {
  private seq = 0;
  private readonly values: AsyncGenerator<unknown, void, unknown>;
  private broken = false;

  constructor(private readonly stream: Stream) {
    this.values = decodeGoStream(bytesOf(stream));
  }

  /** False once the stream failed or was aborted: it must not carry another call. */
  get usable(): boolean {
    return !this.broken && this.stream.status === "open";
  }

  /** One call; rejects with RpcError for the server's error, or the transport's error (the stream is then unusable). */
  async call(method: string, args: unknown, signal?: AbortSignal): Promise<unknown> {
    signal?.throwIfAborted();
    const seq = this.seq++;
    const onAbort = () => this.abort(signal?.reason instanceof Error ? signal.reason : new Error("call aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      this.stream.send(encodeGo({ ServiceMethod: method, Seq: seq }));
      this.stream.send(encodeGo(args));
      const header = await this.next(method);
      const body = await this.next(method);
      if (typeof header !== "object" || header === null) throw new Error(`${method}: malformed reply header`);
      const fields = header as Record<string, unknown>;
      if (fields.Seq !== seq) throw new Error(`${method}: reply for call ${String(fields.Seq)}, expected ${seq}`);
      const error = asText(fields.Error);
      if (error) throw new RpcError(error);
      return body;
    } catch (err) {
      if (!(err instanceof RpcError)) this.broken = true;
      signal?.throwIfAborted();
      throw err;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  abort(err: Error): void {
    this.broken = true;
    this.stream.abort(err);
  }

  close(): void {
    this.broken = true;
    void this.stream.close().catch(() => this.stream.abort(new Error("closing")));
  }

  private async next(method: string): Promise<unknown> {
    const { value, done } = await this.values.next();
    if (done) throw new Error(`${method}: the server closed the stream`);
    return value;
  }
}
