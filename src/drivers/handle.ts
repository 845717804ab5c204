/**
 * The driver handle: what a new agent needs to find a task's executor again
 * (Nomad's reattach config). The task runner persists it right after
 * startTask; recoverTask trusts none of it blindly — the executor must answer
 * `version` with the stored pid, and a stored task pid is only ever touched
 * through the task's cgroup or after its /proc start time matched.
 */
import * as v from "valibot";
import { CgroupPathsSchema } from "../cgroups/paths.ts";
import { LaunchRequestSchema } from "../executor/protocol.ts";

/** Bumped when the handle's shape changes incompatibly. */
export const HANDLE_VERSION = 1;

const Pid = v.pipe(v.number(), v.integer(), v.minValue(1));
const AbsolutePath = v.pipe(v.string(), v.startsWith("/", "must be an absolute path"));

export const TaskHandleSchema = v.object({
  version: v.literal(HANDLE_VERSION),
  driver: v.string(),
  allocId: v.string(),
  taskName: v.string(),
  executor: v.object({
    pid: Pid,
    /** /proc/PID/stat start time: tells this executor from a later process with its pid. */
    startTime: v.number(),
    socket: AbsolutePath,
    /** This task's exit result (its executor's other tasks have their own). */
    exitFile: AbsolutePath,
    /** The executor's log, shared by its tasks. */
    log: AbsolutePath,
    /** The executor protocol it speaks and the drover version it runs. */
    protocol: v.number(),
    drover: v.string(),
    /**
     * The task's key in its executor, which supervises several (protocol 2);
     * absent in a protocol-1 handle, whose executor has this task alone.
     */
    key: v.optional(v.string()),
  }),
  task: v.object({ pid: Pid, startTime: v.number() }),
  /**
   * What the task was launched with: another executor needs it to adopt the
   * task if its own dies (its env, user, cgroup, outputs, isolation).
   * Absent in a handle from before adoption, and in one of a task adopted at
   * an agent restart: such a task is killed and restarted instead.
   */
  launch: v.optional(LaunchRequestSchema),
  cgroup: v.nullable(CgroupPathsSchema),
  killSignal: v.string(),
  /** Milliseconds since the epoch. */
  startedAt: v.number(),
});
export type TaskHandle = v.InferOutput<typeof TaskHandleSchema>;

/**
 * The handle as kept in memory while its task runs: without its launch
 * request, which stays in the persisted row (the only place a later agent
 * reads it from) and is read back from there when another executor must adopt
 * the task. Kept in memory it cost ~1.3 KiB of live objects per running task,
 * the task's environment most of it (issue 35: the agent's memory per task).
 */
export function withoutLaunch(handle: TaskHandle): TaskHandle {
  if (!handle.launch) return handle;
  const { launch: _, ...kept } = handle;
  return kept;
}

/** A stored handle's JSON, checked: the handle when this binary can use it, otherwise why not. */
export function parseStoredHandle(json: string | null): { handle: TaskHandle | null; problem?: string } {
  if (json === null) return { handle: null };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { handle: null, problem: `not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  const parsed = v.safeParse(TaskHandleSchema, value);
  return parsed.success ? { handle: parsed.output } : { handle: null, problem: v.summarize(parsed.issues) };
}
