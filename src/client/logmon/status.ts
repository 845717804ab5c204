/**
 * The log pump's state as the agent last saw it, folded from the
 * supervisor's events, for GET /v1/agent/self's `logmon` stats (all strings,
 * as Nomad's stats are):
 *
 *   not started ──spawned──> starting ──connected──> running ──lost/unresponsive──> restarting
 *        ▲                      │ start-failed                                          │
 *        │                      ▼                                                       │
 *        │                   failing (retries with backoff) ──connected──> running <────┘
 *   (no task has needed one yet: it starts with the first task)
 */
import type { LogmonEvent } from "./supervisor.ts";

export class LogmonStatus {
  private state = "not started";
  private pid: number | undefined;
  private version = "";
  private restarts = 0;
  private lastError = "";
  private since = new Date();

  observe(event: LogmonEvent): void {
    const was = this.state;
    switch (event.kind) {
      case "spawned":
        if (this.state === "not started") this.state = "starting";
        this.pid = event.pid;
        break;
      case "connected":
        this.state = "running";
        this.pid = event.pid;
        this.version = event.version;
        break;
      case "lost":
      case "unresponsive":
        this.state = "restarting";
        this.restarts++;
        this.lastError = event.kind === "lost" ? "connection lost" : "did not answer a probe";
        break;
      case "start-failed":
        this.state = "failing";
        this.lastError = event.error;
        break;
    }
    if (this.state !== was) this.since = new Date();
  }

  stats(): Record<string, string> {
    return {
      state: this.state,
      pid: this.pid === undefined ? "" : String(this.pid),
      version: this.version,
      restarts: String(this.restarts),
      last_error: this.lastError,
      since: this.since.toISOString(),
    };
  }
}
