/**
 * How many tasks one executor (the per-task supervisor process) holds by
 * default: client.tasks_per_executor, and the drivers' default when no
 * config is given.
 *
 * Measured on the 2-core bench machine (bench/scale.ts, bench/executor-overhead.ts):
 * a bare compiled Bun process costs about 2.9 MiB PSS and 5 ms of CPU to
 * start, an executor with one task about 3.6 MiB and 12 ms. Sixteen tasks to
 * an executor bring that under 0.5 MiB and 1 ms a task, while a crashed
 * executor costs at most sixteen tasks (each still has its own exit file and
 * cgroup, and the agent kills and restarts them by their restart policy).
 * 1 gives every task an executor of its own.
 */
export const DEFAULT_TASKS_PER_EXECUTOR = 16;
