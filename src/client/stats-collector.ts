/**
 * Samples the usage of every running task of the client on one timer, each
 * telemetry.collection_interval, asking each driver once for all of its
 * tasks (a driver whose tasks share executors asks each executor once). The
 * API serves the latest sample, so CPU percentages always cover one interval
 * however often clients ask; each sample also feeds metrics.
 *
 *   add(task) ──> sampled within FIRST_SAMPLE_MS (new tasks only), then every interval
 *   remove(task) ──> its sample and series go; a reading under way for it is dropped
 *   no task left ──> the timer stops
 */
import type { DriverPlugin, TaskResourceUsage } from "../drivers/driver.ts";
import type { Logger } from "../lib/logger.ts";

/**
 * How soon a task that just started gets its first sample: soon enough for
 * a user who asks right after the start, late enough that a thousand tasks
 * starting together are read in a few batches rather than one by one.
 */
export const FIRST_SAMPLE_MS = 100;

interface Entry {
  taskId: string;
  driver: DriverPlugin;
  /** Called with each sample, and with undefined when the task stops (its series go). */
  publish?: (usage: TaskResourceUsage | undefined) => void;
  sample?: TaskResourceUsage;
}

export class StatsCollector {
  private readonly entries = new Map<string, Entry>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private soon: ReturnType<typeof setTimeout> | undefined;
  private collecting = false;

  constructor(
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Starts sampling a task that runs (again: a restart replaces the old entry). */
  add(taskId: string, driver: DriverPlugin, publish?: Entry["publish"]): void {
    this.entries.set(taskId, { taskId, driver, publish });
    this.timer ??= setInterval(() => void this.collect(false), this.intervalMs);
    this.soon ??= setTimeout(() => {
      this.soon = undefined;
      void this.collect(true);
    }, Math.min(FIRST_SAMPLE_MS, this.intervalMs));
  }

  /** Stops sampling a task; its last sample and its series go. */
  remove(taskId: string): void {
    const entry = this.entries.get(taskId);
    if (!entry) return;
    this.entries.delete(taskId);
    entry.publish?.(undefined);
    if (this.entries.size === 0) this.stop();
  }

  /** The newest sample of a task that runs, if one was taken yet. */
  latest(taskId: string): TaskResourceUsage | undefined {
    return this.entries.get(taskId)?.sample;
  }

  stop(): void {
    clearInterval(this.timer);
    clearTimeout(this.soon);
    this.timer = undefined;
    this.soon = undefined;
  }

  private async collect(onlyNew: boolean): Promise<void> {
    if (this.collecting) return;
    this.collecting = true;
    try {
      const byDriver = new Map<DriverPlugin, Entry[]>();
      for (const entry of this.entries.values()) {
        if (onlyNew && entry.sample) continue;
        const list = byDriver.get(entry.driver);
        if (list) list.push(entry);
        else byDriver.set(entry.driver, [entry]);
      }
      await Promise.all([...byDriver].map(([driver, list]) => this.collectFrom(driver, list)));
    } finally {
      this.collecting = false;
    }
  }

  private async collectFrom(driver: DriverPlugin, list: readonly Entry[]): Promise<void> {
    let samples: Map<string, TaskResourceUsage>;
    try {
      samples = driver.taskStatsBatch ? await driver.taskStatsBatch(list.map((entry) => entry.taskId)) : await this.oneByOne(driver, list);
    } catch (err) {
      this.logger.debug({ err: String(err), driver: driver.name }, "task stats unavailable");
      return;
    }
    for (const entry of list) {
      const sample = samples.get(entry.taskId);
      // Removed (or replaced by a restart) while the reading was under way: publishing it
      // would bring back the series the removal took away.
      if (!sample || this.entries.get(entry.taskId) !== entry) continue;
      entry.sample = sample;
      entry.publish?.(sample);
    }
  }

  private async oneByOne(driver: DriverPlugin, list: readonly Entry[]): Promise<Map<string, TaskResourceUsage>> {
    const samples = new Map<string, TaskResourceUsage>();
    await Promise.allSettled(list.map(async (entry) => samples.set(entry.taskId, await driver.taskStats(entry.taskId))));
    return samples;
  }
}
