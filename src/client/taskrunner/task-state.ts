/**
 * A task's state and event history as the API shows it (Nomad's TaskState),
 * and the three ways the task runner changes it:
 *
 *   updateState(state, event)  set the state, append the event, persist, tell the server
 *   emitEvent(event)           append, persist, tell the server
 *   appendEvent(event)         append, persist (the server learns with the next report)
 *
 *   pending ──Started──> running ──Terminated──> pending (Restarting) ──> running ...
 *                                        └─────> dead (Not Restarting / Killed / done)
 */
import { nowNanos } from "../../structs/common.ts";
import { NS_PER_MS } from "../../lib/units.ts";
import { NO_DETAILS, TASK_EVENT, type TaskEvent, type TaskState, type TaskStateName } from "../../structs/task-state.ts";
import { formatDuration } from "../../lib/duration.ts";

/** Events kept per task; older ones are dropped, as Nomad does. */
export const MAX_TASK_EVENTS = 10;

export function newTaskState(): TaskState {
  return { State: "pending", Failed: false, Restarts: 0, LastRestart: null, StartedAt: null, FinishedAt: null, Events: [] };
}

export interface EventFields extends Partial<Omit<TaskEvent, "Type" | "Time" | "DisplayMessage">> {}

/** A new event of `type`, stamped now, with Nomad's DisplayMessage for it. */
export function taskEvent(type: string, fields: EventFields = {}): TaskEvent {
  const event: TaskEvent = { Type: type, Time: nowNanos(), Message: "", DisplayMessage: "", Details: NO_DETAILS, ...fields };
  event.DisplayMessage = displayMessage(event);
  return event;
}

function displayMessage(event: TaskEvent): string {
  const reason = event.RestartReason || event.Message || "";
  switch (event.Type) {
    case TASK_EVENT.Received:
      return "Task received by client";
    case TASK_EVENT.Started:
      return "Task started by client";
    case TASK_EVENT.Terminated: {
      const parts = [`Exit Code: ${event.ExitCode ?? 0}`];
      if (event.Signal) parts.push(`Signal: ${event.Signal}`);
      if (event.Message) parts.push(`Exit Message: "${event.Message}"`);
      return parts.join(", ");
    }
    case TASK_EVENT.Killing:
      return event.KillTimeout
        ? `Sent interrupt. Waiting ${formatDuration(event.KillTimeout / NS_PER_MS)} before force killing`
        : "Sent interrupt";
    case TASK_EVENT.Killed:
      return event.KillError ? `Task killed with error: ${event.KillError}` : "Task successfully killed";
    case TASK_EVENT.Restarting:
      return `${reason ? `${reason} - ` : ""}Task restarting in ${formatDuration((event.StartDelay ?? 0) / NS_PER_MS)}`;
    case TASK_EVENT.NotRestarting:
      return reason || "Task will not restart";
    case TASK_EVENT.DriverMessage:
      return event.DriverMessage ?? "";
    case TASK_EVENT.DriverFailure:
      return event.DriverError || "Failure from driver";
    case TASK_EVENT.SetupFailure:
      return event.SetupError || "Task setup failed";
    case TASK_EVENT.FailedValidation:
      return event.ValidationError || "Validation of task failed";
    case TASK_EVENT.SiblingFailed:
      return `Task's sibling "${event.FailedSibling ?? ""}" failed`;
    case TASK_EVENT.Signaling:
      return `Task being sent signal ${event.TaskSignal ?? ""}${event.TaskSignalReason ? `: ${event.TaskSignalReason}` : ""}`;
    case TASK_EVENT.RestartSignal:
      return event.RestartReason || "Task signaled to restart";
    case TASK_EVENT.LeaderDead:
      return "Leader Task in Group dead";
    case TASK_EVENT.MainDead:
      return "Main tasks in the group died";
    default:
      return event.Message ?? "";
  }
}

export interface TaskStateSink {
  /**
   * Writes the state durably; called before anyone is told. Each call writes
   * the whole state, so after one that failed (a full disk) the next that
   * succeeds records everything since.
   */
  persistState(state: TaskState): void;
  /** A write failed; the state still changes in memory and is told. */
  persistStateFailed(err: unknown): void;
  /** Tells the alloc runner (and through it the server) that the state changed. */
  stateChanged(state: TaskState): void;
}

export class TaskStateTracker {
  constructor(
    private current: TaskState,
    private readonly sink: TaskStateSink,
  ) {}

  get state(): TaskState {
    return this.current;
  }

  updateState(state: TaskStateName, event?: TaskEvent, options: { failed?: boolean } = {}): void {
    const next: TaskState = { ...this.current, Events: [...this.current.Events] };
    if (event) this.append(next, event);
    const now = new Date().toISOString();
    if (state === "running" && next.State !== "running") next.StartedAt = now;
    if (state === "dead" && next.State !== "dead") next.FinishedAt = now;
    if (options.failed) next.Failed = true;
    next.State = state;
    this.commit(next, true);
  }

  emitEvent(event: TaskEvent): void {
    const next: TaskState = { ...this.current, Events: [...this.current.Events] };
    this.append(next, event);
    this.commit(next, true);
  }

  appendEvent(event: TaskEvent): void {
    const next: TaskState = { ...this.current, Events: [...this.current.Events] };
    this.append(next, event);
    this.commit(next, false);
  }

  private append(state: TaskState, event: TaskEvent): void {
    if (event.FailsTask) state.Failed = true;
    if (event.Type === TASK_EVENT.Restarting) {
      state.Restarts += 1;
      state.LastRestart = new Date(event.Time / NS_PER_MS).toISOString();
    }
    state.Events.push(event);
    if (state.Events.length > MAX_TASK_EVENTS) state.Events.splice(0, state.Events.length - MAX_TASK_EVENTS);
  }

  private commit(next: TaskState, notify: boolean): void {
    try {
      this.sink.persistState(next);
    } catch (err) {
      this.sink.persistStateFailed(err);
    }
    this.current = next;
    if (notify) this.sink.stateChanged(next);
  }
}
