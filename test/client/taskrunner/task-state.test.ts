import { describe, expect, test } from "bun:test";
import { MAX_TASK_EVENTS, newTaskState, taskEvent, TaskStateTracker } from "../../../src/client/taskrunner/task-state.ts";
import { TASK_EVENT, type TaskState } from "../../../src/structs/task-state.ts";

function tracker(options: { failWrites?: () => boolean } = {}) {
  const persisted: TaskState[] = [];
  const notified: TaskState[] = [];
  const failures: unknown[] = [];
  const persist = (s: TaskState) => {
    if (options.failWrites?.()) throw new Error("database or disk is full");
    persisted.push(s);
  };
  const t = new TaskStateTracker(newTaskState(), { persistState: persist, persistStateFailed: (err) => failures.push(err), stateChanged: (s) => notified.push(s) });
  return { t, persisted, notified, failures };
}

describe("task state", () => {
  test("updateState persists, then notifies; emitEvent notifies; appendEvent only persists", () => {
    const { t, persisted, notified } = tracker();
    t.updateState("running", taskEvent(TASK_EVENT.Started));
    expect(persisted.length).toBe(1);
    expect(notified.length).toBe(1);
    t.emitEvent(taskEvent(TASK_EVENT.Signaling, { TaskSignal: "SIGHUP" }));
    expect(notified.length).toBe(2);
    t.appendEvent(taskEvent(TASK_EVENT.DriverMessage, { Message: "note" }));
    expect(persisted.length).toBe(3);
    expect(notified.length).toBe(2);
    expect(t.state.Events.map((e) => e.Type)).toEqual(["Started", "Signaling", "Driver"]);
  });

  test("a write that fails (a full disk) changes nothing the runner sees; the next write that succeeds carries everything", () => {
    let full = true;
    const { t, persisted, notified, failures } = tracker({ failWrites: () => full });
    t.updateState("running", taskEvent(TASK_EVENT.Started));
    t.emitEvent(taskEvent(TASK_EVENT.Killing));
    expect(failures).toHaveLength(2);
    expect(persisted).toHaveLength(0);
    expect(notified.map((s) => s.Events.length)).toEqual([1, 2]);
    full = false;
    t.updateState("dead", taskEvent(TASK_EVENT.Killed));
    expect(persisted.at(-1)!.Events.map((e) => e.Type)).toEqual(["Started", "Killing", "Killed"]);
  });

  test("started and finished times, restarts and failure follow the events", () => {
    const { t } = tracker();
    t.updateState("running", taskEvent(TASK_EVENT.Started));
    expect(t.state.StartedAt).not.toBeNull();
    t.updateState("pending", taskEvent(TASK_EVENT.Restarting, { StartDelay: 15e9, RestartReason: "Restart within policy" }));
    expect(t.state.Restarts).toBe(1);
    expect(t.state.LastRestart).not.toBeNull();
    t.updateState("dead", taskEvent(TASK_EVENT.NotRestarting, { FailsTask: true, RestartReason: "Exceeded allowed attempts" }));
    expect(t.state).toMatchObject({ State: "dead", Failed: true });
    expect(t.state.FinishedAt).not.toBeNull();
  });

  test(`only the last ${MAX_TASK_EVENTS} events are kept`, () => {
    const { t } = tracker();
    for (let i = 0; i < 15; i++) t.appendEvent(taskEvent(TASK_EVENT.DriverMessage, { Message: `m${i}` }));
    expect(t.state.Events.length).toBe(MAX_TASK_EVENTS);
    expect(t.state.Events[0]!.Message).toBe("m5");
    expect(t.state.Events.at(-1)!.Message).toBe("m14");
  });

  test("display messages read as Nomad's", () => {
    expect(taskEvent(TASK_EVENT.Received).DisplayMessage).toBe("Task received by client");
    expect(taskEvent(TASK_EVENT.Terminated, { ExitCode: 137, Signal: 9, Message: "OOM Killed" }).DisplayMessage).toBe(
      'Exit Code: 137, Signal: 9, Exit Message: "OOM Killed"',
    );
    expect(taskEvent(TASK_EVENT.Killing, { KillTimeout: 5e9 }).DisplayMessage).toBe("Sent interrupt. Waiting 5s before force killing");
    expect(taskEvent(TASK_EVENT.Restarting, { StartDelay: 15.5e9, RestartReason: "Restart within policy" }).DisplayMessage).toBe(
      "Restart within policy - Task restarting in 15.5s",
    );
    expect(taskEvent(TASK_EVENT.SiblingFailed, { FailedSibling: "db" }).DisplayMessage).toBe('Task\'s sibling "db" failed');
  });

  test("the tracker never mutates a state it already handed out", () => {
    const { t, notified } = tracker();
    t.updateState("running", taskEvent(TASK_EVENT.Started));
    const first = notified[0]!;
    t.emitEvent(taskEvent(TASK_EVENT.Signaling));
    expect(first.Events.length).toBe(1);
  });
});
