/**
 * Whether and when a task that stopped runs again: Nomad's restart policy.
 *
 *   task exits / fails to start / is killed / restart requested
 *        │
 *        ▼
 *   killed? ──────────────────────────────> Killed (no restart)
 *   restart requested (not a failure)? ──> Restarting now
 *   attempts == 0? ──> Terminated (successful exit that needs no restart) | Not Restarting
 *   interval over? ──> start a new interval, count from 0
 *   count += 1
 *   start error that cannot be retried? ─> Not Restarting
 *   successful exit and no restart on success (batch, some lifecycle hooks)? ─> Terminated
 *   count > attempts? ─> mode fail: Not Restarting | mode delay: Restarting when the interval ends
 *   otherwise ─> Restarting after delay + up to 25 % jitter
 */
import { formatDuration } from "../../lib/duration.ts";
import { NS_PER_MS } from "../../lib/units.ts";
import type { RestartCount } from "../../state/client/local-state.ts";
import type { RestartPolicy, TaskLifecycle } from "../../structs/job.ts";

export type { RestartPolicy, TaskLifecycle as LifecycleHook };

export type RestartDecision =
  | { kind: "restart"; delayMs: number; reason: string }
  | { kind: "not-restarting"; reason: string }
  | { kind: "terminated"; reason: string }
  | { kind: "killed" };

/** Random jitter added to restart delays: up to this fraction of the delay. */
export const RESTART_JITTER = 0.25;

export class RestartTracker {
  private count = 0;
  private intervalStart: number;
  private readonly restartOnSuccess: boolean;
  private pending: { exit?: { successful: boolean }; startError?: { recoverable: boolean }; killed?: boolean; triggered?: boolean; failure?: boolean } = {};

  constructor(
    private readonly policy: RestartPolicy,
    jobType: string,
    lifecycle: TaskLifecycle | null,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {
    this.intervalStart = now();
    let onSuccess = jobType !== "batch" && jobType !== "sysbatch";
    if (lifecycle?.Hook === "prestart" || lifecycle?.Hook === "poststart") onSuccess = lifecycle.Sidecar;
    if (lifecycle?.Hook === "poststop") onSuccess = false;
    this.restartOnSuccess = onSuccess;
  }

  /** Restarts counted in the current interval. */
  get restarts(): number {
    return this.count;
  }

  /** The count to persist with the decision it led to. */
  snapshot(): RestartCount {
    return { count: this.count, intervalStart: this.intervalStart };
  }

  /** Carries on from a count an earlier agent persisted. */
  restore(saved: RestartCount): void {
    this.count = saved.count;
    this.intervalStart = saved.intervalStart;
  }

  exited(successful: boolean): this {
    this.pending.exit = { successful };
    this.pending.failure = true;
    return this;
  }

  failedToStart(recoverable: boolean): this {
    this.pending.startError = { recoverable };
    this.pending.failure = true;
    return this;
  }

  killed(): this {
    this.pending.killed = true;
    return this;
  }

  /** A restart asked for by an operator (not a failure) restarts at once, outside the policy. */
  restartRequested(failure = false): this {
    if (failure) this.pending.failure = true;
    else this.pending.triggered = true;
    return this;
  }

  decide(): RestartDecision {
    const event = this.pending;
    this.pending = {};
    if (event.killed) return { kind: "killed" };
    if (event.triggered) return { kind: "restart", delayMs: 0, reason: "" };

    if (this.policy.Attempts === 0) {
      const reason = "Policy allows no restarts";
      if (!this.restartOnSuccess && event.exit?.successful) return { kind: "terminated", reason };
      return { kind: "not-restarting", reason };
    }

    const now = this.now();
    if (now > this.intervalStart + this.policy.Interval / NS_PER_MS) {
      this.count = 0;
      this.intervalStart = now;
    }
    this.count++;

    if (event.startError && !event.startError.recoverable) {
      return { kind: "not-restarting", reason: "Error was unrecoverable" };
    }
    if (!event.startError && event.exit?.successful && !this.restartOnSuccess) {
      return { kind: "terminated", reason: "Restart unnecessary as task terminated successfully" };
    }
    if (this.count > this.policy.Attempts) {
      if (this.policy.Mode === "fail") {
        return {
          kind: "not-restarting",
          reason: `Exceeded allowed attempts ${this.policy.Attempts} in interval ${formatDuration(this.policy.Interval / NS_PER_MS)} and mode is "fail"`,
        };
      }
      const untilIntervalEnds = this.intervalStart + this.policy.Interval / NS_PER_MS - now;
      return { kind: "restart", delayMs: Math.max(0, untilIntervalEnds), reason: "Exceeded allowed attempts, applying a delay" };
    }
    const delayMs = this.policy.Delay / NS_PER_MS;
    return { kind: "restart", delayMs: delayMs + Math.floor(this.random() * delayMs * RESTART_JITTER), reason: "Restart within policy" };
  }
}

