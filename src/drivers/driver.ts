/**
 * The task-driver interface, shaped like Nomad's DriverPlugin: the task runner
 * starts, recovers, waits for, stops and destroys tasks through it, and never
 * learns how a driver runs them. raw_exec and exec implement it on top of an
 * executor per task (executor-driver.ts).
 *
 *   startTask ──> handle (persisted by the task runner)
 *       │                       │ agent restart
 *       │                 recoverTask(handle)
 *       ▼                       ▼
 *   waitTask (shared result) / signalTask / execTask / execStreamTask / taskStats / inspectTask
 *       │
 *   stopTask(timeout, signal) ──> destroyTask
 */
import * as v from "valibot";
import type { Resources } from "../cgroups/limits.ts";
import type { TaskResourceUsage } from "../stats/task.ts";
import { LaunchRequestSchema, type ExecResult } from "../executor/protocol.ts";
import type { ExecSession } from "../executor/client.ts";
import { BindMountSchema, DeviceNodeSchema, VolumeBindSchema } from "../nsenter/spec.ts";
import type { ExitResult } from "../structs/exit-result.ts";
import type { TaskHandle } from "./handle.ts";

export type { ExecResult, ExecSession, ExitResult, TaskHandle, TaskResourceUsage, Resources };

const NonEmpty = v.pipe(v.string(), v.minLength(1, "must not be empty"));

/** What the task runner gives a driver to start one task. */
export const TaskConfigSchema = v.object({
  // alloc/task ids, the final env, cwd (the task dir), user, the log pump's FIFOs or files, resources:
  // as the executor's launch request carries them.
  ...v.pick(LaunchRequestSchema, ["allocId", "taskName", "env", "cwd", "user", "stdoutPath", "stderrPath", "resources"]).entries,
  /** Required by raw_exec and exec; a docker task without one runs its image's. */
  command: v.optional(NonEmpty),
  args: v.optional(v.array(v.string()), []),
  /** client.cgroup_parent. */
  cgroupParent: v.optional(NonEmpty, "drover"),
  /** The signal stopTask sends when the caller names none (Nomad's kill_signal); absent: the driver's default (docker: the image's StopSignal), else SIGINT. */
  killSignal: v.optional(NonEmpty),
  /** Host path of the alloc's shared dir (<alloc>/alloc); isolated tasks see it at /alloc. */
  allocDir: v.optional(v.pipe(v.string(), v.startsWith("/", "must be an absolute path"))),
  /** The group's network mode: "host" shares the host's network, "none" isolates it (exec, docker), "bridge" joins `netns`. */
  network: v.optional(v.picklist(["host", "none", "bridge"]), "host"),
  /** bridge: the alloc's network namespace (client/network/netns.ts), made and attached before any task starts. */
  netns: v.optional(v.pipe(v.string(), v.startsWith("/", "must be an absolute path"))),
  /** The group network block's hostname and dns, and in bridge mode the alloc's address (the network hook's). */
  groupNetwork: v.optional(
    v.object({
      address: v.optional(v.string()),
      hostname: v.optional(v.string()),
      dns: v.optional(v.object({ servers: v.array(v.string()), searches: v.array(v.string()), options: v.array(v.string()) })),
    }),
    {},
  ),
  /** Device nodes and mounts from device plugins: given to an isolated task; a raw_exec task sees the host's. */
  devices: v.optional(v.array(DeviceNodeSchema), []),
  mounts: v.optional(v.array(BindMountSchema), []),
  /** Host volumes bound into an isolated task's root; a raw_exec task's are bound into its task dir by the client (the volumes hook). */
  volumes: v.optional(v.array(VolumeBindSchema), []),
  /** The job's `config` block beyond command and args, as written; each driver reads and checks its own keys. */
  driverConfig: v.optional(v.record(v.string(), v.unknown()), {}),
});
export type TaskConfig = v.InferInput<typeof TaskConfigSchema>;
/** A host volume bound into an isolated task's root. */
export type VolumeBind = v.InferOutput<typeof VolumeBindSchema>;
export type ParsedTaskConfig = v.InferOutput<typeof TaskConfigSchema>;

/** Messages a driver gives while it starts a task; the task runner records each as a "Driver" task event. */
export type DriverEvents = (message: string) => void;

/** Nomad's fingerprint of a driver: whether it can run tasks on this node. */
export interface Fingerprint {
  detected: boolean;
  healthy: boolean;
  description: string;
  /** Node attributes, e.g. "driver.raw_exec" = "1". */
  attributes: Record<string, string>;
}

export type TaskState = "running" | "exited";

export interface TaskStatus {
  id: string;
  allocId: string;
  taskName: string;
  state: TaskState;
  /** Milliseconds since the epoch. */
  startedAt: number;
  completedAt: number | null;
  exitResult: ExitResult | null;
  driverAttributes: Record<string, string>;
}

export interface DriverPlugin {
  readonly name: string;
  fingerprint(): Fingerprint;
  /**
   * A task of this driver is being prepared (its hooks run) and will start
   * soon, or not at all: the driver may get ready for it meanwhile, leaving
   * nothing behind for long if no start follows.
   */
  prepare?(): void;
  /**
   * The agent is destroying everything it ran (a -dev agent's stop), every
   * task already destroyed: end the helpers the driver's tasks shared (the
   * host reaper), so nothing is left behind.
   */
  endSharedHelpers?(): Promise<void>;
  /** Starts the task; the caller persists the handle before anything else. `events` hears what the start is doing (an image download). */
  startTask(config: TaskConfig, events?: DriverEvents): Promise<{ handle: TaskHandle }>;
  /** Reattaches to a task started by an earlier agent; throws TaskRecoveryError when it cannot. */
  recoverTask(handle: TaskHandle): Promise<void>;
  /** How the task ended; every caller gets the same promise. */
  waitTask(taskId: string): Promise<ExitResult>;
  /** Sends `signal` (the task's kill signal when absent), waits up to timeoutMs, then kills what is left. */
  stopTask(taskId: string, timeoutMs: number, signal?: string): Promise<void>;
  /** Frees everything the task holds; a running task needs `force`. */
  destroyTask(taskId: string, force: boolean): Promise<void>;
  inspectTask(taskId: string): TaskStatus;
  signalTask(taskId: string, signal: string): Promise<void>;
  execTask(taskId: string, argv: readonly string[], timeoutMs: number): Promise<ExecResult>;
  /** Starts an interactive session in the task, with a terminal when `tty`; the caller owns its streams. */
  execStreamTask(taskId: string, argv: readonly string[], tty: boolean): Promise<ExecSession>;
  taskStats(taskId: string): Promise<TaskResourceUsage>;
  /**
   * The usage of many tasks at once (a driver whose tasks share supervisors
   * asks each supervisor once); a task without a sample is left out. Drivers
   * without it are asked task by task.
   */
  taskStatsBatch?(taskIds: readonly string[]): Promise<Map<string, TaskResourceUsage>>;
}

/** The id a driver knows a task by. */
export function taskIdOf(allocId: string, taskName: string): string {
  return `${allocId}/${taskName}`;
}

export class TaskNotFoundError extends Error {
  override name = "TaskNotFoundError";
  constructor(readonly taskId: string) {
    super(`task ${taskId} is not known to this driver`);
  }
}

/** recoverTask could not reattach; the message says why and what was done about the task's processes. */
export class TaskRecoveryError extends Error {
  override name = "TaskRecoveryError";
}

/**
 * A task that cannot run as it is defined (no such command, cwd or user):
 * no restart can fix it, so, as in Nomad, it fails at once instead of
 * retrying under the restart policy.
 */
export class UnrunnableTaskError extends Error {
  override name = "UnrunnableTaskError";
}
