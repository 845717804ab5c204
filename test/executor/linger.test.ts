import { describe, expect, test } from "bun:test";
import { IDLE_EXIT_MS, mayExit, ORPHAN_LINGER_MS } from "../../src/executor/linger.ts";

describe("when an executor with no agent may leave", () => {
  const base = { connections: 0, unreadLogBytes: 0 };

  test("never while an agent is connected or the task runs", () => {
    expect(mayExit({ ...base, state: "exited", connections: 1, unattendedMs: ORPHAN_LINGER_MS * 10 })).toBe(false);
    expect(mayExit({ ...base, state: "running", unattendedMs: ORPHAN_LINGER_MS * 10 })).toBe(false);
  });

  test("a never-launched executor leaves after IDLE_EXIT_MS alone", () => {
    expect(mayExit({ ...base, state: "idle", unattendedMs: IDLE_EXIT_MS - 1 })).toBe(false);
    expect(mayExit({ ...base, state: "idle", unattendedMs: IDLE_EXIT_MS })).toBe(true);
  });

  test("an exited task's executor leaves after the linger, but never with log bytes unread in a FIFO", () => {
    expect(mayExit({ ...base, state: "exited", unattendedMs: ORPHAN_LINGER_MS - 1 })).toBe(false);
    expect(mayExit({ ...base, state: "exited", unattendedMs: ORPHAN_LINGER_MS })).toBe(true);
    expect(mayExit({ ...base, state: "exited", unattendedMs: ORPHAN_LINGER_MS * 10, unreadLogBytes: 1 })).toBe(false);
  });
});
