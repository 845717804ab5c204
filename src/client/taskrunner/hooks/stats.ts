/**
 * Samples the task's resource usage every telemetry.collection_interval while
 * it runs, through the driver (the executor reads the task's cgroup and
 * /proc). The API serves the latest sample, so CPU percentages always cover
 * one interval however often clients ask; the sample also feeds metrics.
 */
import type { DriverPlugin, TaskResourceUsage } from "../../../drivers/driver.ts";
import type { Logger } from "../../../lib/logger.ts";
import type { TaskHook } from "./hook.ts";

export interface StatsHook extends TaskHook {
  /** The newest sample, or undefined before the first one (or when the task is not running). */
  latest(): TaskResourceUsage | undefined;
}

export function statsHook(options: {
  driver: DriverPlugin;
  taskId: string;
  intervalMs: number;
  logger: Logger;
  /** Called with each sample, and with undefined when the task stops (its series go). */
  publish?: (usage: TaskResourceUsage | undefined) => void;
}): StatsHook {
  let timer: ReturnType<typeof setInterval> | undefined;
  let sample: TaskResourceUsage | undefined;
  let inFlight = false;
  /**
   * Counts stops. A reading that was under way when the task stopped is
   * dropped: publishing it would bring back the series the stop removed, for
   * good, and a timer started after it would sample a dead task.
   */
  let stops = 0;

  const collect = async () => {
    if (inFlight) return;
    inFlight = true;
    const stopsBefore = stops;
    try {
      const usage = await options.driver.taskStats(options.taskId);
      if (stops !== stopsBefore) return;
      sample = usage;
      options.publish?.(usage);
    } catch (err) {
      options.logger.debug({ err: String(err), task: options.taskId }, "task stats unavailable");
    } finally {
      inFlight = false;
    }
  };
  const stop = async () => {
    stops++;
    clearInterval(timer);
    timer = undefined;
    sample = undefined;
    options.publish?.(undefined);
  };

  return {
    name: "stats",
    latest: () => sample,
    async poststart() {
      clearInterval(timer);
      const stopsBefore = stops;
      await collect();
      if (stops === stopsBefore) timer = setInterval(() => void collect(), options.intervalMs);
    },
    exited: stop,
    stop,
    shutdown: stop,
  };
}
