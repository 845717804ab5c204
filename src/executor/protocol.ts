/**
 * The agent <-> executor protocol: what the agent may ask an executor about
 * the tasks it supervises, as request/response pairs over the executor's unix
 * socket (JSON lines, src/rpc/). Both sides are typed from this table, so an
 * executor left running by an older agent answers `version` first and the
 * new agent checks `protocol` before anything else.
 *
 * One executor supervises several tasks (protocol 2): each call on a task
 * names it by `key`, the name its files carry in the run directory. A call
 * without a key means the executor's own task, keyed by the executor's own
 * name: that is all protocol 1 knew, and a protocol-1 executor (one task)
 * ignores the key the agent sends it.
 */
import * as v from "valibot";
import { CgroupPathsSchema } from "../cgroups/paths.ts";
import { ResourcesSchema } from "../cgroups/limits.ts";
import { TaskResourceUsageSchema } from "../stats/task.ts";
import { ExitResultSchema } from "../structs/exit-result.ts";

/** Bumped on any change; an agent refuses an executor speaking one it does not list in SUPPORTED_EXECUTOR_PROTOCOLS. */
export const EXECUTOR_PROTOCOL = 2;

/**
 * What this agent can reattach to: protocol 1 executors (one task each, left
 * by an agent before shared executors) answer every call it makes, since
 * they drop the `key` they do not know; it never launches into them.
 */
export const SUPPORTED_EXECUTOR_PROTOCOLS: readonly number[] = [1, 2];

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
/**
 * A task's name inside its executor, and the base name of its files there
 * (<run dir>/<key>.exit.json): no "/" or leading ".", so they stay in the run directory.
 */
const TaskKey = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, "must be a file name of letters, digits, '.', '_' and '-'"), v.maxLength(64));
/** Which task a call is about; absent: the executor's own task (protocol 1's only one). */
const Key = { key: v.optional(TaskKey) };


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

export const SupervisedTaskSchema = v.object({
  key: TaskKey,
  allocId: v.string(),
  taskName: v.string(),
  state: ExecutorStateSchema,
  task: v.nullable(LaunchResultSchema),
});
export type SupervisedTask = v.InferOutput<typeof SupervisedTaskSchema>;

export const VersionResultSchema = v.object({
  protocol: v.number(),
  /** The drover version the executor runs (it may predate the agent's). */
  version: v.string(),
  pid: Pid,
  /** idle: no task; running: any task runs; exited: every task has exited. */
  state: ExecutorStateSchema,
  /** With exactly one task, that task (all protocol 1 reports); else null. */
  allocId: v.nullable(v.string()),
  taskName: v.nullable(v.string()),
  task: v.nullable(LaunchResultSchema),
  /** Every task it supervises (protocol 2; absent from protocol 1). */
  tasks: v.optional(v.array(SupervisedTaskSchema)),
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
const OnTask = v.object(Key);

export const ExecutorProtocol = {
  version: { params: NoParams, result: VersionResultSchema },
  launch: { params: v.object({ ...LaunchRequestSchema.entries, ...Key }), result: LaunchResultSchema },
  /**
   * Takes over a running task whose executor died: it is the host reaper's
   * child now (reaper-protocol.ts). The request is the one it was launched
   * with; the executor watches the process by pidfd, learns its end from the
   * reaper, and answers for it as for a task it launched.
   */
  adopt: { params: v.object({ ...LaunchRequestSchema.entries, key: TaskKey, task: LaunchResultSchema }), result: LaunchResultSchema },
  /** Answers when the task has exited and its result is durable; any number may wait. */
  wait: { params: OnTask, result: ExitResultSchema },
  /** Sends a signal to the task's main process. */
  signal: { params: v.object({ ...Key, signal: Signal }), result: v.null() },
  /** Signal the process group, wait up to graceMs, then kill everything left; answers when none is. */
  shutdown: { params: v.object({ ...Key, signal: Signal, graceMs: Millis }), result: ExitResultSchema },
  stats: { params: OnTask, result: TaskResourceUsageSchema },
  /** The usage of each named task that runs, in one answer (the agent samples every task each interval). */
  statsBatch: { params: v.object({ keys: v.array(TaskKey) }), result: v.record(v.string(), TaskResourceUsageSchema) },
  /** Runs a command in the task's context (env, cwd, user, cgroup). */
  exec: { params: v.object({ ...Key, argv: Argv, timeoutMs: Millis }), result: ExecResultSchema },
  /**
   * Starts an interactive session (exec-session.ts): the command runs on a
   * terminal or pipes whose other ends the agent copies, then claims with
   * execWait. It ends with the connection that started it.
   */
  execStart: { params: v.object({ ...Key, argv: Argv, tty: v.boolean() }), result: ExecStartResultSchema },
  /** Closes the executor's copies of the agent's ends; answers when the command has exited. */
  execWait: { params: v.object({ ...Key, session: SessionId }), result: ExecExitSchema },
  /** Kills the session's command and its process group (the client went away). */
  execKill: { params: v.object({ ...Key, session: SessionId }), result: v.null() },
  /**
   * With a key: kills whatever is left of that task, removes its cgroup and
   * files, and forgets it. Without: does so for every task, then the
   * executor removes its own files and exits.
   */
  destroy: { params: OnTask, result: v.null() },
} as const;
export type ExecutorProtocol = typeof ExecutorProtocol;
