import { describe, expect, test } from "bun:test";
import { RestartTracker, type LifecycleHook, type RestartDecision, type RestartPolicy } from "../../../src/client/taskrunner/restarts.ts";

const S = 1e9;
const policy = (over: Partial<RestartPolicy> = {}): RestartPolicy => ({ Attempts: 2, Interval: 60 * S, Delay: 10 * S, Mode: "fail", RenderTemplates: false, ...over });

function tracker(p: RestartPolicy, jobType = "service", lifecycle: LifecycleHook | null = null) {
  const clock = { now: 1_000_000 };
  const t = new RestartTracker(p, jobType, lifecycle, () => clock.now, () => 0.5);
  return { t, clock };
}

describe("restart tracker", () => {
  test("failures restart after delay + jitter until attempts are used up, then mode fail stops", () => {
    const { t } = tracker(policy());
    expect(t.exited(false).decide()).toEqual({ kind: "restart", delayMs: 11_250, reason: "Restart within policy" });
    expect(t.exited(false).decide()).toEqual({ kind: "restart", delayMs: 11_250, reason: "Restart within policy" });
    expect(t.exited(false).decide()).toEqual({
      kind: "not-restarting",
      reason: 'Exceeded allowed attempts 2 in interval 1m0s and mode is "fail"',
    });
  });

  test("mode delay waits for the interval to end instead of failing", () => {
    const { t, clock } = tracker(policy({ Mode: "delay" }));
    t.exited(false).decide();
    clock.now += 5_000;
    t.exited(false).decide();
    clock.now += 5_000;
    expect(t.exited(false).decide()).toEqual({ kind: "restart", delayMs: 50_000, reason: "Exceeded allowed attempts, applying a delay" });
  });

  test("a new interval resets the count", () => {
    const { t, clock } = tracker(policy());
    t.exited(false).decide();
    t.exited(false).decide();
    clock.now += 61_000;
    expect(t.exited(false).decide().kind).toBe("restart");
    expect(t.restarts).toBe(1);
  });

  test("jitter stays within 25 % of the delay", () => {
    for (const r of [0, 0.25, 0.999]) {
      const t = new RestartTracker(policy(), "service", null, () => 0, () => r);
      const decision = t.exited(false).decide();
      expect(decision.kind === "restart" && decision.delayMs).toBeGreaterThanOrEqual(10_000);
      expect(decision.kind === "restart" && decision.delayMs).toBeLessThanOrEqual(12_500);
    }
  });

  const successCases: [string, string, LifecycleHook | null, RestartDecision["kind"]][] = [
    ["service job", "service", null, "restart"],
    ["batch job", "batch", null, "terminated"],
    ["prestart non-sidecar", "service", { Hook: "prestart", Sidecar: false }, "terminated"],
    ["prestart sidecar", "service", { Hook: "prestart", Sidecar: true }, "restart"],
    ["poststart sidecar", "batch", { Hook: "poststart", Sidecar: true }, "restart"],
    ["poststop", "service", { Hook: "poststop", Sidecar: false }, "terminated"],
  ];
  for (const [name, jobType, lifecycle, expected] of successCases) {
    test(`a successful exit of a ${name}: ${expected}`, () => {
      expect(tracker(policy(), jobType, lifecycle).t.exited(true).decide().kind).toBe(expected);
    });
  }

  test("attempts = 0: a failure is final; a batch success terminates", () => {
    expect(tracker(policy({ Attempts: 0 })).t.exited(false).decide()).toEqual({ kind: "not-restarting", reason: "Policy allows no restarts" });
    expect(tracker(policy({ Attempts: 0 }), "batch").t.exited(true).decide().kind).toBe("terminated");
    expect(tracker(policy({ Attempts: 0 })).t.exited(true).decide().kind).toBe("not-restarting");
  });

  test("an unrecoverable start error is final; a recoverable one counts as an attempt", () => {
    expect(tracker(policy()).t.failedToStart(false).decide()).toEqual({ kind: "not-restarting", reason: "Error was unrecoverable" });
    expect(tracker(policy()).t.failedToStart(true).decide().kind).toBe("restart");
  });

  test("killed wins over everything; an operator restart is immediate and not counted against the policy", () => {
    const { t } = tracker(policy({ Attempts: 1 }));
    expect(t.exited(false).killed().decide()).toEqual({ kind: "killed" });
    expect(t.restartRequested().decide()).toEqual({ kind: "restart", delayMs: 0, reason: "" });
    expect(t.restarts).toBe(0);
  });
});
