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

export function logmonHook(logmon: Pick<LogmonClient, "register" | "flush" | "deregister">, taskId: string): TaskHook {
  let registered = false;
  const register = async (req: TaskHookContext) => {
    await logmon.register({
      id: taskId,
      logDir: req.allocDir.logs,
      taskName: req.task.Name,
      maxFiles: req.task.LogConfig.MaxFiles,
      maxFileSizeMB: req.task.LogConfig.MaxFileSizeMB,
    });
    registered = true;
  };
  return {
    name: "logmon",
    async prestart(req: PrestartRequest) {
      createTaskFifos(req.allocDir.logs, req.task.Name);
      await register(req);
    },
    // A reattached task skips prestart. The logmon most likely still pumps it
    // (registering is idempotent), but this agent's client must learn the task
    // to register it again with a logmon that restarts without it.
    async poststart(req) {
      if (!registered) await register(req);
    },
    async exited(_req: ExitedRequest) {
      await logmon.flush(taskId);
    },
    async stop(req: StopRequest) {
      if (req.final) await logmon.deregister(taskId);
    },
  };
}
