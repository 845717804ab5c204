/**
 * The logmon's registered tasks and what each RPC method does to them.
 *
 *   resume()     saved registrations ─► open each (a vanished alloc dir drops its task)
 *   register     same task again: keep it (new limits apply) │ new: open ─► save ─► pump
 *   flush        move what the task's FIFOs hold now, then answer
 *   deregister   flush ─► stop pumping ─► close ─► save
 *   sweep()      a task whose FIFOs were deleted (alloc dir destroyed, no deregister)
 *                ─► stop pumping ─► close: its open files would otherwise pin disk space
 *   shutdown()   flush every task ─► close (registrations stay saved for the next logmon)
 */
import { errorText, log } from "./log.ts";
import type { Scratch } from "./log-stream.ts";
import type { LogmonTask } from "./protocol.ts";
import type { Pump } from "./pump.ts";
import type { Registrations } from "./registrations.ts";
import { TaskLogs } from "./task-logs.ts";

export class Logmon {
  private readonly tasks = new Map<string, TaskLogs>();

  constructor(
    private readonly registrations: Registrations,
    private readonly pump: Pump,
    private readonly scratch: Scratch,
  ) {}

  get taskCount(): number {
    return this.tasks.size;
  }

  resume(): void {
    const { tasks, problem } = this.registrations.load();
    if (problem) log("warn", "saved registrations set aside", { problem });
    for (const task of tasks) {
      try {
        this.start(task);
      } catch (err) {
        log("warn", "saved task not resumed", { id: task.id, error: errorText(err) });
      }
    }
    if (problem || this.tasks.size !== tasks.length) this.save();
    log("info", "resumed", { tasks: this.tasks.size });
  }

  register(task: LogmonTask): { created: boolean } {
    const existing = this.tasks.get(task.id);
    if (existing) {
      if (!existing.sameFifos(task)) {
        throw new Error(`task "${task.id}" is registered with logDir ${existing.task.logDir} and taskName ${existing.task.taskName}; deregister it first`);
      }
      if (existing.updateLimits(task)) this.save();
      return { created: false };
    }
    for (const [id, other] of this.tasks) {
      if (other.sameFifos(task)) throw new Error(`the FIFOs of task "${task.taskName}" in ${task.logDir} are already registered as "${id}"`);
    }
    this.start(task);
    this.save();
    log("info", "registered", { id: task.id, logDir: task.logDir, taskName: task.taskName });
    return { created: true };
  }

  flush(id: string): { bytes: number } {
    return { bytes: this.get(id).flush() };
  }

  deregister(id: string): { removed: boolean } {
    const logs = this.tasks.get(id);
    if (!logs) return { removed: false };
    logs.flush();
    this.stop(id, logs);
    this.save();
    log("info", "deregistered", { id });
    return { removed: true };
  }

  sweep(): void {
    const dropped: string[] = [];
    for (const [id, logs] of this.tasks) {
      if (!logs.abandoned()) continue;
      this.stop(id, logs);
      dropped.push(id);
    }
    if (dropped.length === 0) return;
    this.save();
    log("info", "dropped tasks whose FIFOs were deleted", { ids: dropped });
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
    for (const stream of logs.streams) this.pump.add(stream);
  }

  private stop(id: string, logs: TaskLogs): void {
    for (const stream of logs.streams) this.pump.remove(stream);
    logs.close();
    this.tasks.delete(id);
  }

  private save(): void {
    this.registrations.save([...this.tasks.values()].map((logs) => logs.task));
  }
}
