/** The log pump's state as /v1/agent/self reports it, from the supervisor's events. */
import { describe, expect, test } from "bun:test";
import { LogmonStatus } from "../../../src/client/logmon/status.ts";

describe("LogmonStatus", () => {
  test("not started until a task needs it; running once connected", () => {
    const status = new LogmonStatus();
    expect(status.stats()).toMatchObject({ state: "not started", pid: "", restarts: "0" });
    status.observe({ kind: "spawned", pid: 41 });
    expect(status.stats()).toMatchObject({ state: "starting", pid: "41" });
    status.observe({ kind: "connected", pid: 41, version: "0.1.0", tasks: 0 });
    expect(status.stats()).toMatchObject({ state: "running", pid: "41", version: "0.1.0", restarts: "0", last_error: "" });
  });

  test("a lost or hung pump counts a restart and says why; a failed start says its error", () => {
    const status = new LogmonStatus();
    status.observe({ kind: "connected", pid: 41, version: "0.1.0", tasks: 2 });
    status.observe({ kind: "lost", pid: 41 });
    expect(status.stats()).toMatchObject({ state: "restarting", restarts: "1", last_error: "connection lost" });
    status.observe({ kind: "spawned", pid: 42 });
    expect(status.stats()).toMatchObject({ state: "restarting", pid: "42" });
    status.observe({ kind: "start-failed", error: "no socket", retryInMs: 100 });
    expect(status.stats()).toMatchObject({ state: "failing", last_error: "no socket" });
    status.observe({ kind: "connected", pid: 42, version: "0.1.0", tasks: 2 });
    status.observe({ kind: "unresponsive", pid: 42 });
    expect(status.stats()).toMatchObject({ state: "restarting", restarts: "2", last_error: "did not answer a probe" });
  });
});
