/**
 * Puts the task in the client's stats collector (stats-collector.ts) while
 * it runs: from poststart (a start, or a reattach) until it exits, stops or
 * the agent shuts down. The collector samples every task on one timer.
 */
import type { DriverPlugin, TaskResourceUsage } from "../../../drivers/driver.ts";
import type { StatsCollector } from "../../stats-collector.ts";
import type { TaskHook } from "./hook.ts";

interface StatsHookOptions {
  collector: StatsCollector;
  driver: DriverPlugin;
  taskId: string;
  /** Called with each sample, and with undefined when the task stops (its series go). */
  publish?: (usage: TaskResourceUsage | undefined) => void;
}

/** A class, its methods on the prototype: one lives per running task (issue 35: the agent's memory per task). */
class StatsHook implements TaskHook {
  readonly name = "stats";

  constructor(private readonly options: StatsHookOptions) {}

  async poststart(): Promise<void> {
    this.options.collector.add(this.options.taskId, this.options.driver, this.options.publish);
  }

  async exited(): Promise<void> {
    this.remove();
  }

  async stop(): Promise<void> {
    this.remove();
  }

  async shutdown(): Promise<void> {
    this.remove();
  }

  private remove(): void {
    this.options.collector.remove(this.options.taskId);
  }
}

export function statsHook(options: StatsHookOptions): TaskHook {
  return new StatsHook(options);
}
