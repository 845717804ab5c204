/** Sharing unchanged task states between an alloc's versions (see shareTaskStates). */
import { NO_DETAILS, type TaskEvent, type TaskState } from "../../structs/task-state.ts";

type TaskStates = Record<string, TaskState> | null;

/**
 * `next` with every task state and event that equals one of `previous` (the
 * alloc's stored version) replaced by that object. A client reports all of
 * an alloc's task states each time one changes, parsed into new objects, and
 * the server keeps recent versions (the event buffer's allocs); sharing what
 * did not change keeps one copy of an alloc's event history instead of one
 * per report (issue 35: the agent's memory per running task).
 */
export function shareTaskStates(previous: TaskStates, next: TaskStates): TaskStates {
  if (next) for (const state of Object.values(next)) shareNoDetails(state.Events);
  if (!previous || !next) return next;
  const shared: Record<string, TaskState> = {};
  let same = Object.keys(previous).length === Object.keys(next).length;
  for (const [name, state] of Object.entries(next)) {
    const before = previous[name];
    shared[name] = before ? shareTaskState(before, state) : state;
    same &&= shared[name] === before;
  }
  return same ? previous : shared;
}

/** Each event without details gets the one shared NO_DETAILS: the report is a fresh parse, this write's own. */
function shareNoDetails(events: TaskEvent[]): void {
  for (const event of events) if (event.Details !== null && event.Details !== NO_DETAILS && isEmpty(event.Details)) event.Details = NO_DETAILS;
}

function isEmpty(record: object): boolean {
  for (const _ in record) return false;
  return true;
}

function shareTaskState(before: TaskState, next: TaskState): TaskState {
  const events = next.Events.map((event, i) => (before.Events[i] && sameEvent(before.Events[i], event) ? before.Events[i] : event));
  const sameEvents = events.length === before.Events.length && events.every((event, i) => event === before.Events[i]);
  const sameFields =
    next.State === before.State &&
    next.Failed === before.Failed &&
    next.Restarts === before.Restarts &&
    next.LastRestart === before.LastRestart &&
    next.StartedAt === before.StartedAt &&
    next.FinishedAt === before.FinishedAt;
  if (sameEvents && sameFields) return before;
  return { ...next, Events: sameEvents ? before.Events : events };
}

function sameEvent(a: TaskEvent, b: TaskEvent): boolean {
  if (a.Type !== b.Type || a.Time !== b.Time) return false;
  const keys = Object.keys(a) as (keyof TaskEvent)[];
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => (key === "Details" ? sameDetails(a.Details, b.Details) : a[key] === b[key]));
}

function sameDetails(a: TaskEvent["Details"], b: TaskEvent["Details"]): boolean {
  if (!a || !b) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
