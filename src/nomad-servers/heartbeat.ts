/**
 * Keeping the node alive on the servers (Nomad's registerAndHeartbeat): a
 * Node.UpdateStatus "ready" at once after registering (the node turns
 * ready), then again before the TTL the server returned runs out. The server
 * marks a node down when TTL plus its grace passes without one, and
 * reschedules its allocs.
 *
 *   register ──> beat ──ok──> wait TTL × HEARTBEAT_TTL_FRACTION ──> beat ──> ...
 *                  │ "node not found" (a new cluster, or the node was GC'd): register again
 *                  │ other error: wait HEARTBEAT_RETRY_MS (jittered), doubling up to
 *                  └──────────────  HEARTBEAT_RETRY_MAX_MS ──> beat
 */
import type { Logger } from "../lib/logger.ts";
import { abortableSleep, jittered } from "./rpc-client.ts";

/**
 * Beat at half the TTL, not at the TTL as Nomad's client does: the server
 * adds a grace of 10 s, but on a loaded 2-core host a beat sent at the last
 * moment can still arrive late.
 */
export const HEARTBEAT_TTL_FRACTION = 0.5;
/** First pause after a failed beat; a server that restarts answers again within a few seconds. */
export const HEARTBEAT_RETRY_MS = 1_000;
/**
 * Longest pause between failed beats. Nomad's client stretches it towards
 * the TTL's end; a fixed bound well under the shortest TTL (10 s) plus the
 * server's grace (10 s) keeps a node whose server came back from being
 * marked down while it waits.
 */
export const HEARTBEAT_RETRY_MAX_MS = 5_000;

export interface HeartbeatCalls {
  /** Node.UpdateStatus "ready"; resolves with the TTL the server granted. */
  beat(): Promise<number>;
  /** Node.Register again. */
  register(): Promise<void>;
}

export class Heartbeat {
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly calls: HeartbeatCalls,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error("heartbeat stopping"));
    await this.running;
  }

  private async loop(): Promise<void> {
    const signal = this.abort.signal;
    let retryMs = HEARTBEAT_RETRY_MS;
    while (!signal.aborted) {
      let waitMs: number;
      try {
        const ttlMs = await this.calls.beat();
        retryMs = HEARTBEAT_RETRY_MS;
        waitMs = ttlMs * HEARTBEAT_TTL_FRACTION;
      } catch (err) {
        if (signal.aborted) return;
        if (String(err).includes("node not found")) {
          this.logger.info("the servers do not know this node; registering again");
          await this.calls.register().catch((registerErr: unknown) => this.logger.warn({ err: String(registerErr) }, "registering again failed"));
          waitMs = 0;
        } else {
          this.logger.warn({ err: String(err), retry_ms: retryMs }, "heartbeat failed; retrying");
          waitMs = jittered(retryMs);
          retryMs = Math.min(retryMs * 2, HEARTBEAT_RETRY_MAX_MS);
        }
      }
      try {
        await abortableSleep(waitMs, signal);
      } catch {
        return;
      }
    }
  }
}
