/**
 * Calls a protocol served on a unix socket. Results are validated against the
 * method's result schema, so a peer of another version fails loudly rather
 * than feeding wrong shapes onward. When the connection drops, every call in
 * flight fails with RpcConnectionError.
 */
import { setImmediate } from "node:timers";
import * as v from "valibot";
import { withTimeout } from "../lib/timeout.ts";
import { connectUnix, type Connection } from "../runtime/unix.ts";
import { LineBuffer, parseLine, type ParamsOf, type Protocol, type ResultOf } from "./protocol.ts";

/** How long a connect may take before the peer is considered gone. */
export const CONNECT_TIMEOUT_MS = 2_000;

/** The peer is not there or went away: the caller decides whether that means it died. */
export class RpcConnectionError extends Error {
  override name = "RpcConnectionError";
}

/** The peer answered with an error. */
export class RpcRemoteError extends Error {
  override name = "RpcRemoteError";
}

/** Whether `err` is a server's answer that it has no `method`: a helper left running by an older drover. */
export function isUnknownMethod(err: unknown, method: string): boolean {
  return err instanceof RpcRemoteError && err.message === `unknown method "${method}"`;
}

/**
 * Who hears a call's answer: a promise's resolve and reject for call(), or a
 * long-lived object's own methods for answerTo().
 */
export interface RpcAnswer<T> {
  answered(value: T): void;
  failed(err: Error): void;
}

interface Pending {
  answer: RpcAnswer<unknown>;
  result: v.GenericSchema;
}

export class RpcClient<P extends Protocol> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  private readonly closeWaiters: (() => void)[] = [];
  /**
   * The calls made in this turn of the event loop, sent in one write at its
   * end: while hundreds of tasks start, a write per call (a logmon
   * registration, an executor's launch) woke the peer once per call, each
   * wake-up a syscall's worth of the agent's thread and often its CPU
   * taken by the peer there and then (issue 35). Lines, so the peer reads
   * them as it would separate writes.
   */
  private outgoing: string[] = [];

  private constructor(
    private readonly protocol: P,
    private conn: Connection | null,
  ) {}

  static async connect<P extends Protocol>(path: string, protocol: P, timeoutMs = CONNECT_TIMEOUT_MS): Promise<RpcClient<P>> {
    const client = new RpcClient(protocol, null);
    const lines = new LineBuffer();
    const connecting = connectUnix(path, {
      data: (_conn, chunk) => client.receive(lines, chunk),
      close: () => client.onClose(`connection to ${path} closed`),
    });
    try {
      client.conn = await withTimeout(connecting, timeoutMs, () => new RpcConnectionError(`connect to ${path}: timed out`));
    } catch (err) {
      // A connect that completes after the timeout is closed: left open, it leaks an fd
      // and the peer (an executor counts its agents) sees a client that is gone.
      connecting.then(
        (late) => late.end(),
        () => {},
      );
      if (err instanceof RpcConnectionError) throw err;
      throw new RpcConnectionError(`connect to ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return client;
  }

  /** Calls `method`; rejects after `timeoutMs` when given (the call may still run remotely). */
  call<M extends keyof P & string>(method: M, params: ParamsOf<P, M>, timeoutMs?: number): Promise<ResultOf<P, M>> {
    if (this.closed || !this.conn) return Promise.reject(new RpcConnectionError("connection closed"));
    let id = 0;
    const answer = new Promise<ResultOf<P, M>>((resolve, reject) => {
      id = this.send(method, params, { answered: resolve, failed: reject });
    });
    if (timeoutMs === undefined) return answer;
    return withTimeout(answer, timeoutMs, () => {
      this.pending.delete(id);
      return new RpcConnectionError(`${method}: no answer in ${timeoutMs} ms`);
    });
  }

  /**
   * Calls `method` and hands its answer (or the connection's loss) to `answer`'s methods, later,
   * never before this returns. No promise and no closures: for a call that stays in flight as
   * long as a task runs (an executor's wait), what the agent keeps per task (issue 35).
   */
  answerTo<M extends keyof P & string>(method: M, params: ParamsOf<P, M>, answer: RpcAnswer<ResultOf<P, M>>): void {
    if (this.closed || !this.conn) {
      queueMicrotask(() => answer.failed(new RpcConnectionError("connection closed")));
      return;
    }
    this.send(method, params, answer);
  }

  /** Queues the call for this turn's write; its id. */
  private send<M extends keyof P & string>(method: M, params: ParamsOf<P, M>, answer: RpcAnswer<ResultOf<P, M>>): number {
    const id = this.nextId++;
    this.pending.set(id, { answer: answer as RpcAnswer<unknown>, result: this.protocol[method]!.result });
    this.outgoing.push(`${JSON.stringify({ id, method, params })}\n`);
    if (this.outgoing.length === 1) setImmediate(() => this.sendOutgoing());
    return id;
  }

  /** Resolves when the connection is gone (closed by either side). */
  closedPromise(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    // Calls made just before the close still go: a destroy, then the close.
    this.sendOutgoing();
    this.conn?.end();
    this.onClose("connection closed");
  }

  private sendOutgoing(): void {
    const lines = this.outgoing;
    if (lines.length === 0) return;
    this.outgoing = [];
    if (!this.closed) this.conn?.write(lines.length === 1 ? lines[0]! : lines.join(""));
  }

  private receive(lines: LineBuffer, chunk: string): void {
    let complete: string[];
    try {
      complete = lines.push(chunk);
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err));
      return;
    }
    for (const line of complete) {
      const response = parseLine(line, "response");
      if (response instanceof Error) {
        this.fail(response.message);
        return;
      }
      const pending = this.pending.get(response.id);
      if (!pending) continue;
      this.pending.delete(response.id);
      if (response.error) {
        pending.answer.failed(new RpcRemoteError(response.error.message));
        continue;
      }
      const parsed = v.safeParse(pending.result, response.result);
      if (parsed.success) pending.answer.answered(parsed.output);
      else pending.answer.failed(new RpcRemoteError(`malformed answer: ${v.summarize(parsed.issues)}`));
    }
  }

  /** The peer broke the protocol: every call in flight fails with why, and the connection ends. */
  private fail(reason: string): void {
    this.onClose(reason);
    this.conn?.end();
  }

  private onClose(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.pending.values()) pending.answer.failed(new RpcConnectionError(reason));
    this.pending.clear();
    for (const waiter of this.closeWaiters.splice(0)) waiter();
  }
}
