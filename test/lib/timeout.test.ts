import { describe, expect, test } from "bun:test";
import { settlesWithin, withTimeout } from "../../src/lib/timeout.ts";

const never = new Promise<never>(() => {});

describe("withTimeout", () => {
  test("gives the promise's value, or passes on its own rejection", async () => {
    expect(await withTimeout(Promise.resolve(7), 1_000, () => new Error("late"))).toBe(7);
    await expect(withTimeout(Promise.reject(new Error("own")), 1_000, () => new Error("late"))).rejects.toThrow("own");
  });

  test("rejects with the caller's error, made only when the time is up", async () => {
    let made = 0;
    const onTimeout = () => (made++, new RangeError("gave up"));
    await withTimeout(Promise.resolve(1), 1_000, onTimeout);
    expect(made).toBe(0);
    await expect(withTimeout(never, 10, onTimeout)).rejects.toBeInstanceOf(RangeError);
    expect(made).toBe(1);
  });
});

describe("settlesWithin", () => {
  test("true for a promise that resolves or rejects in time, false for one that does not", async () => {
    expect(await settlesWithin(Promise.resolve(), 1_000)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error("no")), 1_000)).toBe(true);
    expect(await settlesWithin(never, 10)).toBe(false);
  });
});
