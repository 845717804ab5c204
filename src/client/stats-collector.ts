/**
 * Samples the usage of the client's running tasks on one timer, each
 * telemetry.collection_interval, asking each driver once for all of its
 * tasks (a driver whose tasks share executors asks each executor once).
 *
 * A task is sampled while someone uses its figures: always when allocation
 * metrics are published; otherwise once its stats are read through the API,
 * and for WATCHED_MS after the last read. Reading a task's figures costs its
 * executor a dozen small reads of /proc and cgroup files (about 0.3 ms):
 * sampling every task of a thousand each second kept a third of a core busy
 * for figures nobody looked at.
 *
 *   add(task) ──> (metrics published) sampled within FIRST_SAMPLE_MS, then every interval
 *   read(task) ──> a sample no older than one interval (taken now if there is none),
 *                  and the task is sampled every interval for WATCHED_MS
 *   remove(task) ──> its sample and series go; a reading under way for it is dropped
 *
 * CPU percentages cover the time since the task's previous sample: one
 * interval while it is watched; the first read after a quiet spell covers
 * the spell (0 % for a task never sampled, as Nomad's first sample).
 */
import type { DriverPlugin, TaskResourceUsage } from "../drivers/driver.ts";
import type { Logger } from "../lib/logger.ts";

/**
 * How soon a task that just started gets its first sample when metrics are
 * published: soon for a dashboard, late enough that a thousand tasks
 * starting together are read in a few batches rather than one by one.
 */
export const FIRST_SAMPLE_MS = 100;

/** How long a task stays sampled after its figures were last read: a dashboard polls well within it. */
export const WATCHED_MS = 5 * 60_000;

interface Entry {
  taskId: string;
  driver: DriverPlugin;
  /** Called with each sample, and with undefined when the task stops (its series go). */
  publish?: (usage: TaskResourceUsage | undefined) => void;
  sample?: TaskResourceUsage;
  /** When the sample was taken (ms since the epoch). */
  sampledAt: number;
  /** Sampled every interval until then (ms since the epoch). */
  watchedUntil: number;
  /** A reading asked for by read(), shared by every reader meanwhile. */
  reading?: Promise<void>;
}

export class StatsCollector {
  private readonly entries = new Map<string, Entry>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private soon: ReturnType<typeof setTimeout> | undefined;
  private collecting = false;

  constructor(
    private readonly intervalMs: number,
    private readonly logger: Logger,
    /** Sample every running task whether or not anyone reads it (allocation metrics are published). */
    private readonly always = false,
  ) {}

  /** Follows a task that runs (again: a restart replaces the old entry). */
  add(taskId: string, driver: DriverPlugin, publish?: Entry["publish"]): void {
    this.entries.set(taskId, { taskId, driver, publish, sampledAt: 0, watchedUntil: 0 });
    this.timer ??= setInterval(() => void this.collect(false), this.intervalMs);
    if (!this.always) return;
    this.soon ??= setTimeout(() => {
      this.soon = undefined;
      void this.collect(true);
    }, Math.min(FIRST_SAMPLE_MS, this.intervalMs));
  }

  /** Stops following a task; its last sample and its series go. */
  remove(taskId: string): void {
    const entry = this.entries.get(taskId);
    if (!entry) return;
    this.entries.delete(taskId);
    entry.publish?.(undefined);
    if (this.entries.size === 0) this.stop();
  }

  /**
   * The task's figures, no older than one interval (read now when they are),
   * or undefined when it does not run or cannot be read; from now on it is
   * sampled every interval for WATCHED_MS.
   */
  async read(taskId: string): Promise<TaskResourceUsage | undefined> {
    const entry = this.entries.get(taskId);
    if (!entry) return undefined;
    entry.watchedUntil = Date.now() + WATCHED_MS;
    if (entry.sample && Date.now() - entry.sampledAt <= this.intervalMs) return entry.sample;
    entry.reading ??= this.collectFrom(entry.driver, [entry]).finally(() => {
      entry.reading = undefined;
    });
    await entry.reading;
    return this.entries.get(taskId) === entry ? entry.sample : undefined;
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
      const now = Date.now();
      const byDriver = new Map<DriverPlugin, Entry[]>();
      for (const entry of this.entries.values()) {
        if (onlyNew && entry.sample) continue;
        if (!this.always && entry.watchedUntil < now) continue;
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
    const now = Date.now();
    for (const entry of list) {
      const sample = samples.get(entry.taskId);
      // Removed (or replaced by a restart) while the reading was under way: publishing it
      // would bring back the series the removal took away.
      if (!sample || this.entries.get(entry.taskId) !== entry) continue;
      entry.sample = sample;
      entry.sampledAt = now;
      entry.publish?.(sample);
    }
  }

  private async oneByOne(driver: DriverPlugin, list: readonly Entry[]): Promise<Map<string, TaskResourceUsage>> {
    const samples = new Map<string, TaskResourceUsage>();
    await Promise.allSettled(list.map(async (entry) => samples.set(entry.taskId, await driver.taskStats(entry.taskId))));
    return samples;
  }
}
