/**
 * Connects the task's stdout and stderr to the host's log pump:
 *
 *   prestart  make the FIFOs (alloc/logs/.<task>.std{out,err}.fifo), register them
 *   exited    flush: everything the task wrote is in its files before it is reported dead
 *   stop      (final) deregister; the files stay for `alloc logs`
 */
import type { LogmonClient } from "../../logmon/client.ts";
import { createTaskFifos } from "../../logmon/fifo.ts";
import type { ExitedRequest, PrestartRequest, StopRequest, TaskHook } from "./hook.ts";

export function logmonHook(logmon: LogmonClient, taskId: string): TaskHook {
  return {
    name: "logmon",
    async prestart(req: PrestartRequest) {
      createTaskFifos(req.allocDir.logs, req.task.Name);
      await logmon.register({
        id: taskId,
        logDir: req.allocDir.logs,
        taskName: req.task.Name,
        maxFiles: req.task.LogConfig.MaxFiles,
        maxFileSizeMB: req.task.LogConfig.MaxFileSizeMB,
      });
    },
    async exited(_req: ExitedRequest) {
      await logmon.flush(taskId);
    },
    async stop(req: StopRequest) {
      if (req.final) await logmon.deregister(taskId);
    },
  };
}
