/**
 * The agent/executor <-> host reaper protocol (host-reaper.ts), JSON lines
 * over <run dir>/reaper.sock. It is small on purpose: the reaper outlives
 * agents and executors of other versions, so it should almost never change.
 *
 *   version                        who answers (its pid: a task whose parent it is can be adopted)
 *   spawnExecutor(base, drover)    starts `drover executor <base>` as its child; answers once it listens
 *   exitStatus(pid, startTime)     how an orphan it reaped ended, waiting up to waitMs for it
 */
import * as v from "valibot";

export const REAPER_PROTOCOL = 1;

/** Its files in the run directory, beside the executors'. */
export const REAPER_SOCKET = "reaper.sock";
export const REAPER_LOG = "reaper.log";
export const REAPER_LOCK = "reaper.lock";

/** How long an executor it starts may take to listen (a cold `bun src/main.ts` start on a loaded host included). */
export const EXECUTOR_READY_TIMEOUT_MS = 10_000;
/** The longest an exitStatus call may wait for the orphan's end to be reaped. */
export const EXIT_STATUS_MAX_WAIT_MS = 30_000;

const Pid = v.pipe(v.number(), v.integer(), v.minValue(1));
const StartTime = v.pipe(v.number(), v.integer(), v.minValue(0));

export const OrphanExitSchema = v.object({
  exitCode: v.pipe(v.number(), v.integer()),
  /** The signal that ended it, 0 when it exited on its own. */
  signal: v.pipe(v.number(), v.integer(), v.minValue(0)),
});
export type OrphanExitStatus = v.InferOutput<typeof OrphanExitSchema>;

export const ReaperProtocol = {
  version: {
    params: v.object({}),
    result: v.object({ protocol: v.number(), version: v.string(), pid: Pid }),
  },
  spawnExecutor: {
    params: v.object({
      /** The executor's base path: a name in the reaper's run directory. */
      base: v.pipe(v.string(), v.startsWith("/", "must be an absolute path")),
      /** The command that runs drover (a binary, or a runtime and src/main.ts): the agent's, not the reaper's own. */
      drover: v.pipe(v.array(v.string()), v.minLength(1, "must name a program")),
    }),
    result: v.object({ pid: Pid, startTime: StartTime }),
  },
  exitStatus: {
    params: v.object({ pid: Pid, startTime: StartTime, waitMs: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(EXIT_STATUS_MAX_WAIT_MS)) }),
    /** null: no such orphan ended while it watched (within waitMs). */
    result: v.nullable(OrphanExitSchema),
  },
} as const;
export type ReaperProtocol = typeof ReaperProtocol;
