/**
 * One connection to a Nomad server's RPC port, as Nomad's own client opens it
 * (helper/pool): TCP, the byte RpcMultiplexV2, then a yamux session in which
 * every stream starts with its own type byte (RpcNomad for net/rpc calls).
 *
 *   connect ──> TCP open ──> write 0x06 ──> yamux client session ──> open
 *      │                                          │ openRpcStream(): new stream, write 0x01
 *      │ refused / CONNECT_TIMEOUT_MS             │ the server's pings answered by yamux
 *      ▼                                          ▼ socket error / end / close()
 *    rejects                                    closed (every stream ends; callers retry)
 *
 * yamux is @libp2p/yamux, an implementation of HashiCorp's spec (v0 frames,
 * 256 KiB windows, client streams odd) checked here against Nomad 0.12's
 * server; it talks to a libp2p "message stream", which SocketStream adapts
 * from a plain TCP socket. The server opens streams towards its clients too,
 * to forward the API requests a node answers (file listings, alloc stats,
 * restarts): net/rpc ones go to the session's handler; streaming ones
 * (logs, exec) are refused, since Nomad's CLI asks the node's HTTP API
 * for those first.
 */
import { connect, type Socket } from "node:net";
import { logger as libp2pLogger } from "@libp2p/logger";
import { AbstractMessageStream, type SendResult } from "@libp2p/utils";
import type { Stream } from "@libp2p/interface";
import { yamux } from "@libp2p/yamux";
import type { Uint8ArrayList } from "uint8arraylist";
import { serveRpcStream, type RpcHandler } from "./net-rpc.ts";

/** pool.RpcMultiplexV2: yamux, each stream tagged with its own type byte. */
const RPC_MULTIPLEX_V2 = 0x06;
/** pool.RpcNomad: the stream carries net/rpc calls. */
export const RPC_NOMAD = 0x01;

/** Nomad's client gives a dial 10 s; a server that takes longer is treated as down. */
export const CONNECT_TIMEOUT_MS = 10_000;
/**
 * yamux keep-alive pings, at Nomad's pool's interval, keep an idle connection
 * alive through middleboxes. This library only logs a ping that goes
 * unanswered, so a dead server is noticed by the calls' own time bounds
 * (rpc-client.ts).
 */
const KEEPALIVE_INTERVAL_MS = 30_000;

class SocketStream extends AbstractMessageStream {
  constructor(private readonly socket: Socket) {
    super({ log: libp2pLogger("drover:cluster:socket"), direction: "outbound" });
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("drain", () => this.safeDispatchEvent("drain"));
    socket.on("end", () => this.onRemoteCloseWrite());
    socket.on("close", (hadError) => this.onTransportClosed(hadError ? new Error("connection to the server failed") : undefined));
    socket.on("error", () => {
      // "close" follows with hadError set.
    });
  }

  sendData(data: Uint8ArrayList): SendResult {
    let canSendMore = true;
    for (const buf of data) canSendMore = this.socket.write(buf);
    return { sentBytes: data.byteLength, canSendMore };
  }

  sendReset(): void {
    this.socket.destroy();
  }

  sendPause(): void {
    this.socket.pause();
  }

  sendResume(): void {
    this.socket.resume();
  }

  async close(): Promise<void> {
    this.socket.end();
  }
}

export interface RpcSession {
  readonly address: string;
  readonly isOpen: boolean;
  /** A new yamux stream, already tagged for net/rpc. */
  openRpcStream(): Promise<Stream>;
  /** Resolves once the connection is gone, whoever closed it. */
  readonly closed: Promise<void>;
  close(): void;
}

/** host:port → TCP connection with the multiplex byte written, or a rejection naming the address. */
function dial(address: string): Promise<Socket> {
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at).replace(/^\[|\]$/g, "");
  const port = Number(address.slice(at + 1));
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true, keepAlive: true });
    const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      socket.write(Uint8Array.of(RPC_MULTIPLEX_V2));
      resolve(socket);
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot connect to the Nomad server at ${address}: ${err.message}`));
    });
  });
}

async function serveInbound(stream: Stream, handler: RpcHandler | undefined): Promise<void> {
  if (!handler) {
    stream.abort(new Error("this client serves no calls from the server"));
    return;
  }
  await serveRpcStream(stream, RPC_NOMAD, handler);
}

export async function openSession(address: string, handler?: RpcHandler): Promise<RpcSession> {
  const socket = await dial(address);
  const transport = new SocketStream(socket);
  const muxer = yamux({ enableKeepAlive: true, keepAliveInterval: KEEPALIVE_INTERVAL_MS })().createStreamMuxer(transport);
  muxer.addEventListener("stream", (event) => void serveInbound(event.detail, handler));
  let open = true;
  const closed = new Promise<void>((resolve) => {
    socket.once("close", () => {
      open = false;
      muxer.abort(new Error("connection closed"));
      resolve();
    });
  });
  return {
    address,
    get isOpen() {
      return open;
    },
    closed,
    async openRpcStream() {
      if (!open) throw new Error(`the connection to ${address} is closed`);
      const stream = await muxer.createStream();
      stream.send(Uint8Array.of(RPC_NOMAD));
      return stream;
    },
    close() {
      socket.destroy();
    },
  };
}
