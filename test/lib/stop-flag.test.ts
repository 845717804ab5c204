import { describe, expect, test } from "bun:test";
import { StopFlag } from "../../src/lib/stop-flag.ts";

describe("StopFlag", () => {
  test("each listener is called once, at the first stop; one unsubscribed before it is not called", () => {
    const flag = new StopFlag();
    const calls: string[] = [];
    flag.onStop(() => calls.push("a"));
    const unsubscribeB = flag.onStop(() => calls.push("b"));
    unsubscribeB();
    expect(flag.stopped).toBe(false);
    flag.stop();
    flag.stop();
    expect(flag.stopped).toBe(true);
    expect(calls).toEqual(["a"]);
  });

  test("a listener added after the stop is not called: the watcher checks `stopped` first", () => {
    const flag = new StopFlag();
    flag.stop();
    const calls: string[] = [];
    flag.onStop(() => calls.push("late"));
    flag.stop();
    expect(calls).toEqual([]);
  });
});
