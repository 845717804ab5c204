/**
 * Puts the task in the client's stats collector (stats-collector.ts) while
 * it runs: from poststart (a start, or a reattach) until it exits, stops or
 * the agent shuts down. The collector samples every task on one timer.
 */
import type { DriverPlugin, TaskResourceUsage } from "../../../drivers/driver.ts";
import type { StatsCollector } from "../../stats-collector.ts";
import type { TaskHook } from "./hook.ts";

export function statsHook(options: {
  collector: StatsCollector;
  driver: DriverPlugin;
  taskId: string;
  /** Called with each sample, and with undefined when the task stops (its series go). */
  publish?: (usage: TaskResourceUsage | undefined) => void;
}): TaskHook {
  const stop = async () => options.collector.remove(options.taskId);
  return {
    name: "stats",
    async poststart() {
      options.collector.add(options.taskId, options.driver, options.publish);
    },
    exited: stop,
    stop,
    shutdown: stop,
  };
}
