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
 */
import type { LogmonTask } from "../../logmon/protocol.ts";
import type { LogmonRpc, LogmonSupervisor } from "./supervisor.ts";

export class LogmonClient {
  private readonly tasks = new Map<string, LogmonTask>();

  constructor(
    private readonly supervisor: LogmonSupervisor,
    private readonly onReregisterFailure: (task: LogmonTask, error: Error) => void = () => {},
  ) {
    supervisor.onConnect((rpc) => this.reregister(rpc));
  }

  /** Starts pumping the task's FIFOs (create them first with createTaskFifos). */
  async register(request: LogmonTask): Promise<{ created: boolean }> {
    const { id, logDir, taskName, maxFiles, maxFileSizeMB } = request;
    const task: LogmonTask = { id, logDir, taskName, maxFiles, maxFileSizeMB };
    const result = await this.supervisor.call("register", task);
    this.tasks.set(task.id, task);
    return result;
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

