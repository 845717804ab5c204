import { describe, expect, test } from "bun:test";
import { formatDuration, parseDuration } from "../../src/lib/duration.ts";

describe("Go durations", () => {
  test("parse", () => {
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("1m30s")).toBe(90_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("1.5s")).toBe(1_500);
    expect(parseDuration("0")).toBe(0);
    for (const bad of ["", "10", "5x", "s", "1m 30s", "-1s"]) expect(() => parseDuration(bad)).toThrow(/invalid duration/);
  });

  test("format as Go prints them", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(250)).toBe("250ms");
    expect(formatDuration(1_500)).toBe("1.5s");
    expect(formatDuration(1_800_000)).toBe("30m0s");
    expect(formatDuration(5_400_000)).toBe("1h30m0s");
    expect(formatDuration(86_400_000)).toBe("24h0m0s");
  });
});
