/**
 * Go's values on Nomad's wire: time.Time in its binary form both ways, nil
 * read as Go's zero value, unknown fields dropped, raw strings decoded, and
 * int64s written so that Go can read them back as integers.
 */
import { describe, expect, test } from "bun:test";
import { decodeGo, encodeGo } from "../../src/nomad-servers/wire/msgpack.ts";
import { fromGo, goTimeToIso, isoToGoTime, toGo } from "../../src/nomad-servers/go-values.ts";
import { TaskStateSchema } from "../../src/structs/task-state.ts";
import { AllocClientUpdateSchema } from "../../src/structs/api.ts";

const utf8 = new TextEncoder();

describe("Go time values", () => {
  test("a time survives the trip to Go's binary form and back", () => {
    const iso = "2026-11-24T02:47:00.123Z";
    const bytes = isoToGoTime(iso);
    expect(bytes.length).toBe(15);
    expect(bytes[0]).toBe(1);
    expect(goTimeToIso(bytes)).toBe(iso);
  });

  test("null is Go's zero time, and Go's zero time reads as null", () => {
    const zero = isoToGoTime(null);
    expect([...zero]).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
    expect(goTimeToIso(zero)).toBeNull();
  });

  test("the Unix epoch is 62135596800 s after Go's year 1", () => {
    const view = new DataView(isoToGoTime("1970-01-01T00:00:00.000Z").buffer);
    expect(view.getBigInt64(1)).toBe(62_135_596_800n);
  });
});

describe("fromGo", () => {
  test("keeps the schema's fields, fills nil with zero values, decodes raw strings and times", () => {
    const started = "2026-11-24T03:00:00.000Z";
    const state = fromGo(TaskStateSchema, {
      State: utf8.encode("running"),
      Failed: false,
      Restarts: 2,
      LastRestart: isoToGoTime(null),
      StartedAt: isoToGoTime(started),
      FinishedAt: isoToGoTime(null),
      Events: null,
      TaskHandle: { Version: 1 },
    });
    expect(state).toEqual({ State: "running", Failed: false, Restarts: 2, LastRestart: null, StartedAt: started, FinishedAt: null, Events: [] });
  });
});

describe("toGo and the msgpack codec", () => {
  test("an alloc update goes out with Go times and int64 nanoseconds that decode as integers", () => {
    const time = 1_795_488_413_812_000_000;
    const update = toGo(AllocClientUpdateSchema, {
      ID: "a",
      ClientStatus: "running",
      TaskStates: {
        t: { State: "running", Failed: false, Restarts: 0, LastRestart: null, StartedAt: "2026-11-24T03:00:00.000Z", FinishedAt: null, Events: [{ Type: "Started", Time: time }] },
      },
    });
    const bytes = encodeGo(update);
    // 0xcf/0xd3: the nanoseconds went out as a 64-bit integer, not a float (0xcb), which Go refuses.
    const at = bytes.indexOf(0xcf) >= 0 ? bytes.indexOf(0xcf) : bytes.indexOf(0xd3);
    expect(at).toBeGreaterThan(0);
    expect(bytes.includes(0xcb)).toBe(false);
    const back = decodeGo(bytes) as { TaskStates: { t: { StartedAt: Uint8Array; Events: { Time: number }[] } } };
    expect(goTimeToIso(back.TaskStates.t.StartedAt)).toBe("2026-11-24T03:00:00.000Z");
    expect(back.TaskStates.t.Events[0]!.Time).toBe(time);
  });
});
