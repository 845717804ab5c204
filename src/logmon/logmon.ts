/**
 * The logmon's registered tasks and what each RPC method does to them.
 *
 *   resume()     saved registrations ─► open each (a vanished alloc dir drops its task)
 *   register     same task again: keep it (new limits apply) │ new: open ─► pump ─► saved ─► answer
 *   registerBatch  register for each task (each checked alone), one save for all
 *   flush        move what the task's FIFOs hold now, then answer
 *   deregister   flush ─► stop pumping ─► close ─► saved ─► answer
 *   sweep()      a task whose FIFOs were deleted (alloc dir destroyed, no deregister)
 *                ─► stop pumping ─► close: its open files would otherwise pin disk space
 *   shutdown()   flush every task ─► close (registrations stay saved for the next logmon)
 *
 * Every start and stop tells the pump's CPU weight how many tasks it serves.
 *
 * Saving appends the changes (registrations.ts: a journal beside a snapshot
 * of every task, written anew once the journal is long): the changes of one
 * turn of the event loop (a thousand tasks registering together) share one
 * write, and each caller is answered only once the write that holds its
 * change is done.
 */
import { errorText, log } from "./log.ts";
import type { Scratch } from "./log-stream.ts";
import { parseOrThrow } from "../lib/validation.ts";
import { LogmonTaskSchema, type LogmonTask, type RegisterBatchResult } from "./protocol.ts";
import type { Pump } from "./pump.ts";
import type { Registrations } from "./registrations.ts";
import { TaskLogs } from "./task-logs.ts";

export class Logmon {
  private readonly tasks = new Map<string, TaskLogs>();
  /** Which task holds each pair of FIFOs (a log dir and a task name). */
  private readonly byFifos = new Map<string, string>();
  /** The save the next changes join; it runs once the current turn of the event loop is over. */
  private pendingSave: Promise<void> | null = null;
  /** Changes not yet written, by task id (null: removed). */
  private unsaved = new Map<string, LogmonTask | null>();
  /** The last write failed: the files lag behind the tasks until a write succeeds, which writes a snapshot. */
  private writeFailed = false;

  constructor(
    private readonly registrations: Registrations,
    private readonly pump: Pump,
    private readonly scratch: Scratch,
    /** Told the number of tasks after each change: the pump's CPU weight follows it (cpu-weight.ts). */
    private readonly followTasks: (tasks: number) => void = () => {},
  ) {}

  get taskCount(): number {
    return this.tasks.size;
  }

  resume(): void {
    const { tasks, problem, repaired } = this.registrations.load();
    if (problem) log("warn", "saved registrations set aside", { problem });
    if (repaired) log("info", "saved registrations repaired", { repaired });
    for (const task of tasks) {
      try {
        this.start(task);
      } catch (err) {
        log("warn", "saved task not resumed", { id: task.id, error: errorText(err) });
      }
    }
    // A failed write is logged by save() and leaves the old file, which the next change writes over:
    // a logmon that cannot write now still pumps the tasks it resumed.
    if (problem || repaired || this.tasks.size !== tasks.length) {
      this.writeFailed = true;
      void this.save().catch(() => undefined);
    }
    log("info", "resumed", { tasks: this.tasks.size });
  }

  async register(task: LogmonTask): Promise<{ created: boolean }> {
    const existing = this.tasks.get(task.id);
    if (existing) {
      if (!existing.sameFifos(task)) {
        throw new Error(`task "${task.id}" is registered with logDir ${existing.task.logDir} and taskName ${existing.task.taskName}; deregister it first`);
      }
      const changed = existing.updateLimits(task);
      if (changed) this.unsaved.set(task.id, existing.task);
      await this.written(changed);
      return { created: false };
    }
    const holder = this.byFifos.get(fifosKey(task));
    if (holder !== undefined) throw new Error(`the FIFOs of task "${task.taskName}" in ${task.logDir} are already registered as "${holder}"`);
    this.start(task);
    this.unsaved.set(task.id, task);
    log("info", "registered", { id: task.id, logDir: task.logDir, taskName: task.taskName });
    await this.save();
    return { created: true };
  }

  /**
   * Registers each task as `register` would, in one turn: their saves are one
   * write. A task that is malformed or refused gets its own error; the rest
   * are registered all the same.
   */
  async registerBatch(tasks: readonly unknown[]): Promise<RegisterBatchResult> {
    const results = await Promise.all(
      tasks.map(async (raw, i) => {
        try {
          return await this.register(parseOrThrow(LogmonTaskSchema, raw, `registerBatch tasks[${i}]`));
        } catch (err) {
          return { error: errorText(err) };
        }
      }),
    );
    return { results };
  }

  flush(id: string): { bytes: number } {
    return { bytes: this.get(id).flush() };
  }

  async deregister(id: string): Promise<{ removed: boolean }> {
    const logs = this.tasks.get(id);
    if (!logs) {
      await this.written(false);
      return { removed: false };
    }
    logs.flush();
    this.stop(id, logs);
    log("info", "deregistered", { id });
    await this.save();
    return { removed: true };
  }

  /** Resolves once the registrations without the dropped tasks are written (at once when none was dropped). */
  async sweep(): Promise<void> {
    const dropped: string[] = [];
    for (const [id, logs] of this.tasks) {
      if (!logs.abandoned()) continue;
      this.stop(id, logs);
      dropped.push(id);
    }
    if (dropped.length === 0) return;
    log("info", "dropped tasks whose FIFOs were deleted", { ids: dropped });
    // A failed write is logged by save(); the next change writes everything again.
    await this.save().catch(() => undefined);
  }

  shutdown(): void {
    this.pump.stop();
    for (const [id, logs] of this.tasks) {
      try {
        logs.flush();
      } catch (err) {
        log("error", "flush at shutdown failed", { id, error: errorText(err) });
      }
      logs.close();
    }
    this.tasks.clear();
  }

  private get(id: string): TaskLogs {
    const logs = this.tasks.get(id);
    if (!logs) throw new Error(`no task registered as "${id}"`);
    return logs;
  }

  private start(task: LogmonTask): void {
    const logs = TaskLogs.open(task, this.scratch);
    this.tasks.set(task.id, logs);
    this.byFifos.set(fifosKey(task), task.id);
    for (const stream of logs.streams) this.pump.add(stream);
    this.followTasks(this.tasks.size);
  }

  private stop(id: string, logs: TaskLogs): void {
    for (const stream of logs.streams) this.pump.remove(stream);
    logs.close();
    this.tasks.delete(id);
    this.unsaved.set(id, null);
    this.byFifos.delete(fifosKey(logs.task));
    this.followTasks(this.tasks.size);
  }

  /**
   * Resolves once every registration as it stands now is written; rejects when that write failed.
   * The write waits for a microtask, not a macrotask: the registrations of one batch of RPCs still
   * share it, and it cannot queue behind the pump's tick, whose wait blocks the JS thread for up to
   * IDLE_WAIT_MS and sees only the event loop's file descriptors, not its pending callbacks.
   */
  private save(): Promise<void> {
    this.pendingSave ??= new Promise<void>((resolve, reject) =>
      queueMicrotask(() => {
        this.pendingSave = null;
        const changes = this.unsaved;
        this.unsaved = new Map();
        try {
          if (this.writeFailed || this.registrations.wantsSnapshot(changes.size, this.tasks.size)) {
            this.registrations.save([...this.tasks.values()].map((logs) => logs.task));
          } else {
            this.registrations.append(changes);
          }
          this.writeFailed = false;
          resolve();
        } catch (err) {
          this.writeFailed = true;
          log("error", "saving the registrations failed", { path: this.registrations.path, error: errorText(err) });
          reject(new Error(`save the registrations to ${this.registrations.path}: ${errorText(err)}`));
        }
      }),
    );
    return this.pendingSave;
  }

  /**
   * Resolves once the file holds the registrations as they stand, for a caller that `changed` them
   * or not: one repeating a call whose write is pending or failed (a retry) is answered only once
   * its change is on disk, and a write that failed is tried again.
   */
  private written(changed: boolean): Promise<void> {
    if (changed || this.writeFailed) return this.save();
    return this.pendingSave ?? Promise.resolve();
  }
}

function fifosKey(task: Pick<LogmonTask, "logDir" | "taskName">): string {
  return `${task.logDir}\0${task.taskName}`;
}
