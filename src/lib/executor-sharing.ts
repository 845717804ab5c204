/**
 * How many tasks one executor (the per-task supervisor process) holds by
 * default: client.tasks_per_executor, and the drivers' default when no
 * config is given.
 *
 * Measured on the 2-core bench machine (bench/scale.ts, bench/executor-overhead.ts):
 * a bare compiled Bun process costs about 2.9 MiB PSS and 5 ms of CPU to
 * start, an executor with one task about 3.6 MiB and 12 ms, so only fewer
 * executors move the helpers' memory per task (docs/performance.md, "Tasks
 * that outlive their executor").
 *
 * The trade was a crashed executor's blast radius: its tasks were killed and
 * restarted by their policy. Since executors run under the host reaper
 * (executor/host-reaper.ts), a dead executor's tasks run on as the reaper's
 * children and another executor adopts them, exit status included, so a crash
 * costs no task and 64 to an executor is the default. What a crash still
 * costs: the adopted tasks' calls (stats, signal, exec) wait until the
 * adoption (milliseconds), and one executor's bug reaches 64 tasks' answers.
 * A task is still killed and restarted when no reaper was above its executor
 * (an executor an older agent started, or one started while the reaper was
 * down). 1 gives every task an executor of its own.
 */
export const DEFAULT_TASKS_PER_EXECUTOR = 64;
