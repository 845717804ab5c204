/**
 * Calls to the Nomad servers, as Nomad's client makes them (client/rpc.go,
 * helper/pool): one yamux session to the server in use, one stream per call
 * in flight (idle streams are reused), and on a failed connection or a
 * cluster without a leader, the next server after a short jittered pause,
 * until RPC_HOLD_TIMEOUT_MS has passed.
 *
 *   call ──> session to servers.current() (opened once, shared) ──> idle or new stream ──> reply
 *              │ connect fails / stream breaks / "No cluster leader"
 *              ▼
 *            servers.failed(addr), drop the session ──> pause ──> next server ──> ... ──> hold timeout: reject
 *
 * An error the server answers with (RpcError) is the caller's to handle and
 * is never retried here: it names something wrong with the request.
 */
import type { Logger } from "../lib/logger.ts";
import { RpcError, RpcStream, type RpcHandler } from "./wire/net-rpc.ts";
import { openSession, type RpcSession } from "./wire/session.ts";
import type { ServerList } from "./servers.ts";

/**
 * How long a call keeps trying other servers before it fails: Nomad's
 * RPCHoldTimeout (5 s), the time a leader election normally takes.
 */
export const RPC_HOLD_TIMEOUT_MS = 5_000;
/** Pause between tries: Nomad waits a random part of the hold timeout (1/16 of it, its JitterFraction). */
export const RPC_RETRY_MS = RPC_HOLD_TIMEOUT_MS / 16;

/**
 * How long a call may go unanswered before the server is treated as gone and
 * the next one tried. Nomad's client relies on yamux keep-alives to notice a
 * dead server; the yamux used here does not close a session whose pings go
 * unanswered, so every call carries its own bound (blocking queries: their
 * wait plus BLOCKING_QUERY_MARGIN_MS).
 */
export const RPC_CALL_TIMEOUT_MS = 30_000;
/** A blocking query's wait (Nomad's default MaxQueryTime, 5 min), sent explicitly. */
export const BLOCKING_QUERY_WAIT_MS = 300_000;
/** The server adds up to 1/16 of the wait as jitter; beyond that and a round trip, the query is lost. */
export const BLOCKING_QUERY_MARGIN_MS = BLOCKING_QUERY_WAIT_MS / 16 + RPC_CALL_TIMEOUT_MS;

export interface CallOptions {
  signal?: AbortSignal;
  /** Defaults to RPC_CALL_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** structs.ErrNoLeader's text: safe to retry, nothing was changed. */
const NO_LEADER = "No cluster leader";

export function isNoLeader(err: unknown): boolean {
  return err instanceof RpcError && err.message.includes(NO_LEADER);
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** `ms` plus up to as much again at random, so many clients do not retry in step. */
export function jittered(ms: number): number {
  return ms + Math.random() * ms;
}

export class NomadRpc {
  private session: Promise<RpcSession> | undefined;
  private idle: RpcStream[] = [];
  private closed = false;
  /** Answers the calls servers forward to this node on its connection; set once the agent's API exists. */
  handler: RpcHandler | undefined;

  constructor(
    readonly servers: ServerList,
    private readonly logger: Logger,
  ) {}

  async call(method: string, args: unknown, { signal, timeoutMs = RPC_CALL_TIMEOUT_MS }: CallOptions = {}): Promise<unknown> {
    const deadline = Date.now() + RPC_HOLD_TIMEOUT_MS;
    for (;;) {
      if (this.closed) throw new Error("the connection to the Nomad servers is closed");
      const address = this.servers.current();
      let stream: RpcStream | undefined;
      // A timeout aborts the stream like a broken connection: the next server is tried.
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        stream = await this.stream(address);
        const reply = await stream.call(method, args, signal ? AbortSignal.any([signal, timeout]) : timeout);
        this.release(stream);
        return reply;
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (err instanceof RpcError && !isNoLeader(err)) {
          if (stream) this.release(stream);
          throw err;
        }
        stream?.close();
        if (!(err instanceof RpcError)) this.dropSession();
        this.servers.failed(address);
        this.logger.warn({ server: address, rpc: method, err: String(err) }, "Nomad server call failed");
        if (Date.now() >= deadline) throw err;
        await abortableSleep(jittered(RPC_RETRY_MS), signal);
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const stream of this.idle) stream.close();
    this.idle = [];
    void this.session?.then((session) => session.close(), () => undefined);
    this.session = undefined;
  }

  private async stream(address: string): Promise<RpcStream> {
    let session = await this.sessionTo(address);
    if (!session.isOpen) {
      this.dropSession();
      session = await this.sessionTo(address);
    }
    const reused = this.idle.pop();
    if (reused?.usable) return reused;
    return new RpcStream(await session.openRpcStream());
  }

  private sessionTo(address: string): Promise<RpcSession> {
    const existing = this.session;
    if (existing) {
      return existing.then(
        (session) => {
          if (session.address === address && session.isOpen) return session;
          this.dropSession();
          return this.sessionTo(address);
        },
        () => {
          if (this.session === existing) this.session = undefined;
          return this.sessionTo(address);
        },
      );
    }
    const opening = openSession(address, (method, args) => {
      if (!this.handler) throw new Error(`${method}: this node is still starting`);
      return this.handler(method, args);
    });
    this.session = opening;
    opening.then(
      (session) => {
        this.logger.info({ server: address }, "connected to Nomad server");
        void session.closed.then(() => {
          if (this.session === opening) this.dropSession();
        });
      },
      () => {
        if (this.session === opening) this.session = undefined;
      },
    );
    return opening;
  }

  /** Closes the session in use (and its idle streams); the next call opens a new one. */
  private dropSession(): void {
    const current = this.session;
    this.session = undefined;
    for (const stream of this.idle) stream.close();
    this.idle = [];
    void current?.then(
      (session) => session.close(),
      () => undefined,
    );
  }

  private release(stream: RpcStream): void {
    if (stream.usable && !this.closed) this.idle.push(stream);
    else stream.close();
  }
}
