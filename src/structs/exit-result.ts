/**
 * How a task ended, as its executor records it and the task runner decides
 * from it (Nomad's drivers.ExitResult). Persisted by the executor (its exit
 * file) and by the client (a task runner's last exit), so it lives here,
 * below both.
 */
import * as v from "valibot";

export const ExitResultSchema = v.object({
  /** The exit code; 128 + signal when a signal ended the task (as a shell reports it). */
  exitCode: v.number(),
  /** The signal that ended the task, 0 when it exited on its own. */
  signal: v.number(),
  /** The kernel's OOM killer killed a process of the task's cgroup. */
  oomKilled: v.boolean(),
  /** Set when supervision itself failed (the executor died, processes would not die). */
  err: v.optional(v.string()),
  /** Milliseconds since the epoch. */
  finishedAt: v.number(),
});
export type ExitResult = v.InferOutput<typeof ExitResultSchema>;
