/**
 * The agent <-> executor protocol: what the agent may ask the executor that
 * supervises one task, as request/response pairs over the executor's unix
 * socket (JSON lines, src/rpc/). Both sides are typed from this table, so an
 * executor left running by an older agent answers `version` first and the
 * new agent checks `protocol` before anything else.
 */
import * as v from "valibot";
import { CgroupPathsSchema } from "../cgroups/paths.ts";
import { ResourcesSchema } from "../cgroups/limits.ts";
import { TaskResourceUsageSchema } from "../stats/task.ts";
import { ExitResultSchema } from "../structs/exit-result.ts";

/** Bumped on any incompatible change; an agent refuses an executor speaking another. */
export const EXECUTOR_PROTOCOL = 1;

/**
 * How long a task's processes may take to die after SIGKILL before the
 * executor gives up on them (D state, a stuck NFS mount) and says which in
 * the result; a caller of `shutdown` allows grace + this.
 */
export const KILL_TIMEOUT_MS = 5_000;

const NonEmpty = v.pipe(v.string(), v.minLength(1, "must not be empty"));
const AbsolutePath = v.pipe(v.string(), v.startsWith("/", "must be an absolute path"));
const Millis = v.pipe(v.number(), v.integer(), v.minValue(0));
const Pid = v.pipe(v.number(), v.integer(), v.minValue(1));
/** A signal as "SIGTERM", "TERM" or "15"; checked by the executor with lib/signals. */
const Signal = NonEmpty;


export const LaunchRequestSchema = v.object({
  allocId: NonEmpty,
  taskName: NonEmpty,
  /** The command and its arguments; a command without "/" is looked up in env.PATH. */
  argv: v.pipe(v.array(v.string()), v.minLength(1, "must name a command")),
  /** The task's whole environment, final (the task runner built it). */
  env: v.record(v.string(), v.string()),
  cwd: AbsolutePath,
  /** User name or uid to run as; the executor's own user when absent. */
  user: v.optional(v.string()),
  /** A FIFO (the log pump reads it) or a regular file; symlinks are refused. */
  stdoutPath: AbsolutePath,
  stderrPath: AbsolutePath,
  resources: ResourcesSchema,
  /** The task's cgroup, created by the executor; null runs the task without one. */
  cgroup: v.nullable(CgroupPathsSchema),
  /** MHz of one core, for the TotalTicks of stats. */
  mhzPerCore: v.pipe(v.number(), v.minValue(0)),
  /**
   * The isolated (exec) driver's spec: when present it is written to a file
   * and the task is started as `drover nsenter <spec file>` instead of argv.
   */
  isolation: v.optional(v.unknown()),
});
export type LaunchRequest = v.InferOutput<typeof LaunchRequestSchema>;

export const LaunchResultSchema = v.object({
  pid: Pid,
  /** The task's start time in ticks since boot (/proc/PID/stat field 22): pid + this names it for good. */
  startTime: v.number(),
  /** Milliseconds since the epoch. */
  startedAt: v.number(),
});
export type LaunchResult = v.InferOutput<typeof LaunchResultSchema>;

export const ExecutorStateSchema = v.picklist(["idle", "running", "exited"]);

export const VersionResultSchema = v.object({
  protocol: v.number(),
  /** The drover version the executor runs (it may predate the agent's). */
  version: v.string(),
  pid: Pid,
  state: ExecutorStateSchema,
  /** The task it supervises, once launched. */
  allocId: v.nullable(v.string()),
  taskName: v.nullable(v.string()),
  task: v.nullable(LaunchResultSchema),
});
export type VersionResult = v.InferOutput<typeof VersionResultSchema>;

export const ExecResultSchema = v.object({
  stdout: v.string(),
  stderr: v.string(),
  exitCode: v.number(),
});
export type ExecResult = v.InferOutput<typeof ExecResultSchema>;

const Argv = v.pipe(v.array(v.string()), v.minLength(1, "must name a command"));
const SessionId = v.pipe(v.number(), v.integer(), v.minValue(1));

export const ExecStartResultSchema = v.object({
  session: SessionId,
  pid: Pid,
  /**
   * The executor's descriptors of the agent's ends, for the agent to copy
   * (pidfd_getfd) before execWait: [terminal master] with a TTY, else
   * [stdin's write end, stdout's read end, stderr's read end].
   */
  fds: v.array(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
export type ExecStartResult = v.InferOutput<typeof ExecStartResultSchema>;

export const ExecExitSchema = v.object({ exitCode: v.number(), signal: v.number() });
export type ExecExit = v.InferOutput<typeof ExecExitSchema>;

const NoParams = v.object({});

export const ExecutorProtocol = {
  version: { params: NoParams, result: VersionResultSchema },
  launch: { params: LaunchRequestSchema, result: LaunchResultSchema },
  /** Answers when the task has exited and its result is durable; any number may wait. */
  wait: { params: NoParams, result: ExitResultSchema },
  /** Sends a signal to the task's main process. */
  signal: { params: v.object({ signal: Signal }), result: v.null() },
  /** Signal the process group, wait up to graceMs, then kill everything left; answers when none is. */
  shutdown: { params: v.object({ signal: Signal, graceMs: Millis }), result: ExitResultSchema },
  stats: { params: NoParams, result: TaskResourceUsageSchema },
  /** Runs a command in the task's context (env, cwd, user, cgroup). */
  exec: { params: v.object({ argv: Argv, timeoutMs: Millis }), result: ExecResultSchema },
  /**
   * Starts an interactive session (exec-session.ts): the command runs on a
   * terminal or pipes whose other ends the agent copies, then claims with
   * execWait. It ends with the connection that started it.
   */
  execStart: { params: v.object({ argv: Argv, tty: v.boolean() }), result: ExecStartResultSchema },
  /** Closes the executor's copies of the agent's ends; answers when the command has exited. */
  execWait: { params: v.object({ session: SessionId }), result: ExecExitSchema },
  /** Kills the session's command and its process group (the client went away). */
  execKill: { params: v.object({ session: SessionId }), result: v.null() },
  /** Kills whatever is left, removes the cgroup and the executor's files, then exits. */
  destroy: { params: NoParams, result: v.null() },
} as const;
export type ExecutorProtocol = typeof ExecutorProtocol;
