/**
 * Connects the task's stdout and stderr to the host's log pump:
 *
 *   prestart   make the FIFOs (alloc/logs/.<task>.std{out,err}.fifo), register them
 *   poststart  after a reattach (no prestart ran in this agent): register again
 *   exited     flush: everything the task wrote is in its files before it is reported dead
 *   stop       (final) deregister; the files stay for `alloc logs`
 */
import type { LogmonClient } from "../../logmon/client.ts";
import { createTaskFifos } from "../../../log-layout/fifo.ts";
import type { ExitedRequest, PrestartRequest, StopRequest, TaskHook, TaskHookContext } from "./hook.ts";

type LogPump = Pick<LogmonClient, "register" | "flush" | "deregister">;

/** A class, its methods on the prototype: one lives per running task (issue 35: the agent's memory per task). */
class LogmonHook implements TaskHook {
  readonly name = "logmon";
  private registered = false;

  constructor(
    private readonly logmon: LogPump,
    private readonly taskId: string,
  ) {}

  async prestart(req: PrestartRequest): Promise<void> {
    createTaskFifos(req.allocDir.logs, req.task.Name);
    await this.register(req);
  }

  // A reattached task skips prestart. The logmon most likely still pumps it
  // (registering is idempotent), but this agent's client must learn the task
  // to register it again with a logmon that restarts without it.
  async poststart(req: TaskHookContext): Promise<void> {
    if (!this.registered) await this.register(req);
  }

  async exited(_req: ExitedRequest): Promise<void> {
    await this.logmon.flush(this.taskId);
  }

  async stop(req: StopRequest): Promise<void> {
    if (req.final) await this.logmon.deregister(this.taskId);
  }

  private async register(req: TaskHookContext): Promise<void> {
    await this.logmon.register({
      id: this.taskId,
      logDir: req.allocDir.logs,
      taskName: req.task.Name,
      maxFiles: req.task.LogConfig.MaxFiles,
      maxFileSizeMB: req.task.LogConfig.MaxFileSizeMB,
    });
    this.registered = true;
  }
}

export function logmonHook(logmon: LogPump, taskId: string): TaskHook {
  return new LogmonHook(logmon, taskId);
}
