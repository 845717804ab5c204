/**
 * A TCP proxy in front of a Nomad server's RPC port that records every
 * net/rpc call a client sends through it, decoded as the server reads it:
 * the multiplex byte, yamux frames (12-byte header: version, type, flags,
 * stream ID, length), and on each stream the client opened (odd IDs) its
 * type byte, then back-to-back msgpack headers and args. Bytes pass through
 * unchanged both ways; streams the server opens (forwarded calls) are not
 * recorded.
 */
import { afterAll } from "bun:test";
import { connect, createServer, type Socket } from "node:net";
import { goStrings } from "../../src/nomad-servers/go-values.ts";
import { decodeGoStream } from "../../src/nomad-servers/wire/msgpack.ts";

export interface RecordedCall {
  method: string;
  /** The args with Go's strings decoded. */
  args: Record<string, unknown>;
}

const YAMUX_HEADER = 12;
const YAMUX_DATA = 0;
const YAMUX_FIN = 0x4;
const YAMUX_RST = 0x8;

/** One stream's payload as an async iterable, fed by the frame parser. */
class Chunks implements AsyncIterable<Uint8Array> {
  private readonly queued: Uint8Array[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(bytes: Uint8Array): void {
    this.queued.push(bytes);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    for (;;) {
      const next = this.queued.shift();
      if (next) yield next;
      else if (this.ended) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

async function* afterTypeByte(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let first = true;
  for await (const bytes of chunks) {
    const rest = first ? bytes.subarray(1) : bytes;
    first = false;
    if (rest.length > 0) yield rest;
  }
}

async function recordStream(chunks: Chunks, calls: RecordedCall[]): Promise<void> {
  const values = decodeGoStream(afterTypeByte(chunks));
  for (;;) {
    const header = await values.next();
    const args = await values.next();
    if (header.done || args.done) return;
    const { ServiceMethod } = goStrings(header.value) as { ServiceMethod: string };
    calls.push({ method: ServiceMethod, args: goStrings(args.value) as Record<string, unknown> });
  }
}

/** Parses the client's side of one connection, feeding each client stream's payload to its recorder. */
function clientSide(calls: RecordedCall[]): (chunk: Buffer) => void {
  let buffer = Buffer.alloc(0);
  let sawMultiplexByte = false;
  const streams = new Map<number, Chunks>();
  return (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (!sawMultiplexByte && buffer.length > 0) {
      sawMultiplexByte = true;
      buffer = buffer.subarray(1);
    }
    while (buffer.length >= YAMUX_HEADER) {
      const type = buffer[1]!;
      const flags = buffer.readUInt16BE(2);
      const id = buffer.readUInt32BE(4);
      const length = buffer.readUInt32BE(8);
      const payload = type === YAMUX_DATA ? length : 0;
      if (buffer.length < YAMUX_HEADER + payload) return;
      if (id % 2 === 1) {
        let stream = streams.get(id);
        if (!stream) {
          stream = new Chunks();
          streams.set(id, stream);
          void recordStream(stream, calls).catch(() => undefined);
        }
        if (payload > 0) stream.push(Uint8Array.from(buffer.subarray(YAMUX_HEADER, YAMUX_HEADER + payload)));
        if (flags & (YAMUX_FIN | YAMUX_RST)) stream.end();
      }
      buffer = buffer.subarray(YAMUX_HEADER + payload);
    }
  };
}

/** A recording proxy to `target` (host:port), closed after the test file. */
export async function rpcRecorder(target: string): Promise<{ address: string; calls: RecordedCall[] }> {
  const calls: RecordedCall[] = [];
  const sockets: Socket[] = [];
  const at = target.lastIndexOf(":");
  const proxy = createServer((client) => {
    const upstream = connect({ host: target.slice(0, at), port: Number(target.slice(at + 1)) });
    sockets.push(client, upstream);
    const record = clientSide(calls);
    client.on("data", (chunk: Buffer) => {
      record(chunk);
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  });
  const port = await new Promise<number>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve((proxy.address() as { port: number }).port)));
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    proxy.close();
  });
  return { address: `127.0.0.1:${port}`, calls };
}
