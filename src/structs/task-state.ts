/**
 * A task's state and events as the client reports them and the API serves
 * them (Nomad's TaskState and TaskEvent). The client owns the content; the
 * server stores what it is sent.
 */
import * as v from "valibot";
import { Int, Nanoseconds, StringMap, Timestamp, UnixNanos } from "./common.ts";

export const TASK_STATES = ["pending", "running", "dead"] as const;
export type TaskStateName = (typeof TASK_STATES)[number];

/** Nomad's task event types (structs.Task*), as they appear in TaskEvent.Type. */
export const TASK_EVENT = {
  Received: "Received",
  Setup: "Task Setup",
  SetupFailure: "Setup Failure",
  DriverFailure: "Driver Failure",
  DriverMessage: "Driver",
  FailedValidation: "Failed Validation",
  Started: "Started",
  Terminated: "Terminated",
  Killing: "Killing",
  Killed: "Killed",
  Restarting: "Restarting",
  NotRestarting: "Not Restarting",
  SiblingFailed: "Sibling Task Failed",
  Signaling: "Signaling",
  RestartSignal: "Restart Signaled",
  LeaderDead: "Leader Task Dead",
  MainDead: "Main Tasks Dead",
  HookFailed: "Task hook failed",
  ClientRestart: "Restarted",
  PluginHealthy: "Plugin became healthy",
  DiskExceeded: "Disk Resources Exceeded",
} as const;

export const TaskEventSchema = v.object({
  Type: v.string(),
  /** Nanoseconds since the epoch. */
  Time: UnixNanos,
  Message: v.optional(v.string(), ""),
  DisplayMessage: v.optional(v.string(), ""),
  Details: v.optional(v.nullable(StringMap), {}),
  // Nomad's older per-type fields; clients and dashboards still read some.
  FailsTask: v.optional(v.boolean()),
  RestartReason: v.optional(v.string()),
  SetupError: v.optional(v.string()),
  DriverError: v.optional(v.string()),
  DriverMessage: v.optional(v.string()),
  ExitCode: v.optional(Int),
  Signal: v.optional(Int),
  KillReason: v.optional(v.string()),
  KillTimeout: v.optional(Nanoseconds),
  KillError: v.optional(v.string()),
  StartDelay: v.optional(Int),
  DownloadError: v.optional(v.string()),
  ValidationError: v.optional(v.string()),
  DiskLimit: v.optional(Int),
  FailedSibling: v.optional(v.string()),
  VaultError: v.optional(v.string()),
  TaskSignalReason: v.optional(v.string()),
  TaskSignal: v.optional(v.string()),
  GenericSource: v.optional(v.string()),
});
export type TaskEvent = v.InferOutput<typeof TaskEventSchema>;

/**
 * The Details of an event that has none (most of them): one frozen object shared by every such
 * event, not one per event that each running task keeps on the client and the server (issue 35).
 * Nothing changes an event's Details once it is made.
 */
export const NO_DETAILS: NonNullable<TaskEvent["Details"]> = Object.freeze({});

export const TaskStateSchema = v.object({
  State: v.picklist(TASK_STATES),
  Failed: v.boolean(),
  Restarts: v.pipe(Int, v.minValue(0)),
  LastRestart: Timestamp,
  StartedAt: Timestamp,
  FinishedAt: Timestamp,
  Events: v.array(TaskEventSchema),
});
export type TaskState = v.InferOutput<typeof TaskStateSchema>;
