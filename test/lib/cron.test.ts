import { describe, expect, test } from "bun:test";
import { nextCronTime, parseCron } from "../../src/lib/cron.ts";

const at = (iso: string) => Date.parse(iso);
const next = (spec: string, zone: string, from: string) => new Date(nextCronTime(spec, zone, at(from))!).toISOString();

describe("cron specs as Nomad (cronexpr) reads them", () => {
  test("5 fields: minute hour day month weekday", () => {
    expect(next("*/15 * * * *", "UTC", "2026-03-01T10:07:00Z")).toBe("2026-03-01T10:15:00.000Z");
    expect(next("0 9 * * MON-FRI", "UTC", "2026-03-06T10:00:00Z")).toBe("2026-03-09T09:00:00.000Z");
  });

  test("6 fields end with a year; 7 start with seconds", () => {
    expect(next("0 0 1 1 * 2030", "UTC", "2026-03-01T00:00:00Z")).toBe("2030-01-01T00:00:00.000Z");
    expect(next("30 * * * * * *", "UTC", "2026-03-01T00:00:00Z")).toBe("2026-03-01T00:00:30.000Z");
  });

  test("predefined specs, L and #, and a time zone", () => {
    expect(next("@daily", "UTC", "2026-03-01T10:00:00Z")).toBe("2026-03-02T00:00:00.000Z");
    expect(next("0 12 L * *", "UTC", "2026-02-03T00:00:00Z")).toBe("2026-02-28T12:00:00.000Z");
    expect(next("0 0 * * MON#2", "UTC", "2026-03-01T00:00:00Z")).toBe("2026-03-09T00:00:00.000Z");
    expect(next("0 9 * * *", "America/New_York", "2026-03-01T00:00:00Z")).toBe("2026-03-01T14:00:00.000Z");
  });

  test("what does not parse says why", () => {
    expect(parseCron("* * *")).toBe('invalid cron spec "* * *": expected 5 to 7 fields, got 3');
    expect(parseCron("61 * * * *")).toMatch(/^invalid cron spec "61 \* \* \* \*": /);
    expect(parseCron("* * * * *", "Mars/Olympus")).toBe('invalid time zone "Mars/Olympus"');
  });
});
