/**
 * An alloc's versions share the task states and events a client report did
 * not change, and the server's answers stay those of the report.
 */
import { describe, expect, test } from "bun:test";
import { shareTaskStates } from "../../src/server/state/task-state-sharing.ts";
import { NO_DETAILS, type TaskEvent, type TaskState } from "../../src/structs/task-state.ts";

const event = (Type: string, Time: number, Details: Record<string, string> = {}): TaskEvent => ({ Type, Time, Message: "", DisplayMessage: Type, Details });
const state = (State: TaskState["State"], Events: TaskEvent[]): TaskState => ({ State, Failed: false, Restarts: 0, LastRestart: null, StartedAt: null, FinishedAt: null, Events });
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("shareTaskStates", () => {
  test("an unchanged report is the stored version itself", () => {
    const before = { web: state("pending", [event("Received", 1)]) };
    expect(shareTaskStates(before, copy(before))).toBe(before);
  });

  test("a new event keeps the earlier events' objects and reads as the report", () => {
    const before = { web: state("pending", [event("Received", 1), event("Task Setup", 2, { message: "Building Task Directory" })]), side: state("pending", [event("Received", 1)]) };
    const report = copy(before);
    report.web = { ...report.web, State: "running", Events: [...report.web.Events, event("Started", 3)] };
    const shared = shareTaskStates(before, report)!;
    expect(shared).toEqual(report);
    expect(shared.side).toBe(before.side);
    expect(shared.web!.Events[0]).toBe(before.web.Events[0]!);
    expect(shared.web!.Events[1]).toBe(before.web.Events[1]!);
    expect(shared.web!.Events[2]).toBe(report.web.Events[2]!);
  });

  test("an event that differs in any field, details included, is the report's", () => {
    const before = { web: state("running", [event("Started", 3, { a: "1" })]) };
    const report = { web: state("running", [event("Started", 3, { a: "2" })]) };
    const shared = shareTaskStates(before, report)!;
    expect(shared).toEqual(report);
    expect(shared.web!.Events[0]).toBe(report.web.Events[0]!);
  });

  test("no stored states, or none reported: the report as it is", () => {
    const report = { web: state("pending", [event("Received", 1)]) };
    expect(shareTaskStates(null, report)).toBe(report);
    expect(shareTaskStates(report, null)).toBeNull();
  });

  test("events without details share one frozen Details object; the answers read the same", () => {
    const report = { web: state("pending", [event("Received", 1), event("Task Setup", 2, { message: "Building Task Directory" })]) };
    const first = shareTaskStates(null, copy(report))!;
    const next = shareTaskStates(first, copy({ web: { ...report.web, Events: [...report.web.Events, event("Started", 3)] } }))!;
    expect(next.web!.Events[0]!.Details).toBe(NO_DETAILS);
    expect(next.web!.Events[2]!.Details).toBe(NO_DETAILS);
    expect(next.web!.Events[1]!.Details).toEqual({ message: "Building Task Directory" });
    expect(Object.isFrozen(NO_DETAILS)).toBe(true);
    expect(JSON.parse(JSON.stringify(first))).toEqual(report);
  });
});
