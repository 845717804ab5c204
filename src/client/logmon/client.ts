/**
 * The agent's typed handle on the logmon, for the task runner's logmon hook:
 *
 *   prestart  createTaskFifos(...) then register(task)
 *   exited    flush(id)            before the task is reported dead
 *   destroy   deregister(id)
 *
 * It remembers what it registered and registers it again whenever the
 * supervisor (re)connects, so a logmon that lost its saved registrations
 * still serves every task (registering is idempotent).
 *
 * Registrations are group-committed: one made while none is under way goes
 * out at once, alone; those made meanwhile wait for it and then go out
 * together in one registerBatch. A node starting many tasks registers them
 * in fewer calls, and the logmon wakes, looks at its FIFOs and syncs
 * its journal once per call rather than once per task (1000 tasks: 909
 * calls before, 614 with this; docs/performance.md). A logmon from before
 * registerBatch gets the batch one register at a time.
 */
import { isUnknownMethod } from "../../rpc/client.ts";
import type { LogmonTask, RegisterBatchResult } from "../../logmon/protocol.ts";
import type { LogmonRpc, LogmonSupervisor } from "./supervisor.ts";

interface QueuedRegistration {
  task: LogmonTask;
  resolve(result: { created: boolean }): void;
  reject(err: Error): void;
}

export class LogmonClient {
  private readonly tasks = new Map<string, LogmonTask>();
  /** Registrations waiting for the one under way. */
  private queued: QueuedRegistration[] = [];
  private registering = false;
  /** The logmon answered registerBatch with "unknown method": until it is replaced, one call per task. */
  private batchUnknown = false;

  constructor(
    private readonly supervisor: LogmonSupervisor,
    private readonly onReregisterFailure: (task: LogmonTask, error: Error) => void = () => {},
  ) {
    supervisor.onConnect((rpc) => {
      // Another logmon may answer now, one that knows registerBatch.
      this.batchUnknown = false;
      return this.reregister(rpc);
    });
  }

  /** Starts pumping the task's FIFOs (create them first with createTaskFifos). */
  async register(request: LogmonTask): Promise<{ created: boolean }> {
    const { id, logDir, taskName, maxFiles, maxFileSizeMB } = request;
    const task: LogmonTask = { id, logDir, taskName, maxFiles, maxFileSizeMB };
    const result = await new Promise<{ created: boolean }>((resolve, reject) => {
      this.queued.push({ task, resolve, reject });
      if (!this.registering) void this.sendQueued();
    });
    this.tasks.set(task.id, task);
    return result;
  }

  /** Sends what is queued, and again whatever was queued meanwhile, until nothing is. */
  private async sendQueued(): Promise<void> {
    this.registering = true;
    try {
      while (this.queued.length > 0) {
        const batch = this.queued;
        this.queued = [];
        await this.send(batch);
      }
    } finally {
      this.registering = false;
    }
  }

  /** One register for one task, else one registerBatch (one register each where the logmon lacks it); answers every caller. */
  private async send(batch: readonly QueuedRegistration[]): Promise<void> {
    const one = (entry: QueuedRegistration) => this.supervisor.call("register", entry.task).then(entry.resolve, entry.reject);
    if (batch.length === 1 || this.batchUnknown) {
      await Promise.all(batch.map(one));
      return;
    }
    let results: RegisterBatchResult["results"];
    try {
      ({ results } = await this.supervisor.call("registerBatch", { tasks: batch.map((entry) => entry.task) }));
    } catch (err) {
      if (isUnknownMethod(err, "registerBatch")) {
        this.batchUnknown = true;
        await Promise.all(batch.map(one));
        return;
      }
      for (const entry of batch) entry.reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    batch.forEach((entry, i) => {
      const result = results[i];
      if (result === undefined) entry.reject(new Error(`logmon registerBatch: no answer for task "${entry.task.id}"`));
      else if ("error" in result) entry.reject(new Error(result.error));
      else entry.resolve(result);
    });
  }

  /** Moves everything the task's pipes hold into its files; resolves once it is on disk (page cache). */
  async flush(id: string): Promise<number> {
    return (await this.supervisor.call("flush", { id })).bytes;
  }

  /** Flushes and stops pumping the task. */
  async deregister(id: string): Promise<boolean> {
    const { removed } = await this.supervisor.call("deregister", { id });
    this.tasks.delete(id);
    return removed;
  }

  async version(): Promise<{ version: string; pid: number; tasks: number }> {
    return this.supervisor.call("version", {});
  }

  private async reregister(rpc: LogmonRpc): Promise<void> {
    for (const task of this.tasks.values()) {
      try {
        await rpc.call("register", task);
      } catch (err) {
        // A connection that broke fails the whole (re)connection, which is retried.
        if (rpc.isClosed) throw err;
        this.onReregisterFailure(task, err instanceof Error ? err : new Error(String(err)));
      }
    }
  }
}

