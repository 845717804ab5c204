/**
 * Checks, before anything is built, what the server could not know about this
 * node: that the task's driver runs here, and that its user exists. Failures
 * are final (Failed Validation): retrying cannot fix them.
 */
import { lookupUser } from "../../../runtime/libc.ts";
import { TASK_EVENT } from "../../../structs/task-state.ts";
import { taskEvent } from "../task-state.ts";
import { UnrecoverableHookError, type PrestartRequest, type TaskHook } from "./hook.ts";
import { taskUser } from "./task-dir.ts";

export interface DriverHealth {
  healthy: boolean;
  description: string;
}

export function validateHook(driverHealth: (driver: string) => DriverHealth | undefined): TaskHook {
  return {
    name: "validate",
    async prestart(req: PrestartRequest) {
      const problems: string[] = [];
      const health = driverHealth(req.task.Driver);
      if (!health) problems.push(`driver "${req.task.Driver}" is not available on this node`);
      else if (!health.healthy) problems.push(`driver "${req.task.Driver}" is unhealthy: ${health.description}`);
      const user = taskUser(req.task);
      if (user !== undefined && !lookupUser(user)) problems.push(`user "${user}" does not exist on this node`);
      if (problems.length === 0) return;
      const message = problems.join("; ");
      throw new UnrecoverableHookError(message, taskEvent(TASK_EVENT.FailedValidation, { ValidationError: message, FailsTask: true }));
    },
  };
}
