/**
 * Builds the task's directory (local/, secrets/, tmp/) before its first
 * start; done once per alloc, so a restart or an agent restart skips it.
 * The task's user owns what it must write.
 */
import { DEFAULT_EXEC_USER } from "../../../drivers/exec.ts";
import { lookupUser } from "../../../runtime/libc.ts";
import { TASK_EVENT } from "../../../structs/task-state.ts";
import { taskEvent } from "../task-state.ts";
import { UnrecoverableHookError, type PrestartRequest, type PrestartResponse, type TaskHook } from "./hook.ts";

export function taskUser(task: { Driver: string; User: string }): string | undefined {
  // A docker task's user is the image's (its own /etc/passwd); the task dir stays root's.
  if (task.Driver === "docker") return undefined;
  if (task.User) return task.User;
  return task.Driver === "exec" ? DEFAULT_EXEC_USER : undefined;
}

export function taskDirHook(options: { secretsTmpfs: boolean }): TaskHook {
  return {
    name: "task_dir",
    async prestart(req: PrestartRequest): Promise<PrestartResponse> {
      req.emitEvent(taskEvent(TASK_EVENT.Setup, { Message: "Building Task Directory", Details: { message: "Building Task Directory" } }));
      const user = taskUser(req.task);
      const owner = user === undefined ? undefined : lookupUser(user);
      if (user !== undefined && !owner) throw new UnrecoverableHookError(`user "${user}" does not exist on this host`);
      req.allocDir.buildTask(req.task.Name, { secretsTmpfs: options.secretsTmpfs, ...(owner ? { owner } : {}) });
      return { done: true };
    },
  };
}
