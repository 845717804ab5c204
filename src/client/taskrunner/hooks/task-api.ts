/**
 * The task API, Nomad's way: a unix socket at <task>/secrets/api.sock
 * (/secrets/api.sock inside an exec task) on which the agent answers as the
 * API does, for this task's identity alone (api/task-access.ts says what it
 * may do). Made before the task first starts and again after an agent
 * restart (the agent serves it, so it goes with the agent); closed and
 * removed once the task stops for good. Like Nomad, a socket that cannot be
 * made is logged, not fatal: most tasks never call the API.
 *
 *   prestart / poststart: serve, unless already serving
 *   stop (final), shutdown: close, which removes the file
 */
import { closeSync, constants, lchownSync, openSync } from "node:fs";
import { removeIfPresent } from "../../../lib/remove-file.ts";
import type { Logger } from "../../../lib/logger.ts";
import { lookupUser } from "../../../runtime/libc.ts";
import type { TaskRef } from "../../task-peers.ts";
import { taskUser } from "./task-dir.ts";
import type { StopRequest, TaskHook, TaskHookContext } from "./hook.ts";

/** Who a request on a task API socket speaks for. */
export interface TaskIdentity extends TaskRef {
  jobId: string;
  namespace: string;
  /** The task's group: with its job, what Nomad's implicit variable access follows. */
  group: string;
}

export interface TaskApiServer {
  close(): Promise<void>;
}

/**
 * Serves the API on a unix socket at `path` (which must not exist) for
 * `task`; closing it removes the socket file through the same path.
 */
export type ServeTaskApi = (path: string, task: TaskIdentity) => TaskApiServer;

export const TASK_API_SOCKET = "api.sock";

/** A class, its methods on the prototype: one lives per running task (issue 35: the agent's memory per task). */
class TaskApiHook implements TaskHook {
  readonly name = "task_api";
  /** The server, and the descriptor of secrets/ its path goes through: held until it is closed, which removes the socket through it. */
  private serving: { server: TaskApiServer; dir: number } | undefined;

  constructor(
    private readonly serve: ServeTaskApi,
    private readonly logger: Logger,
  ) {}

  async prestart(req: TaskHookContext): Promise<void> {
    this.open(req);
  }

  async poststart(req: TaskHookContext): Promise<void> {
    this.open(req);
  }

  async stop(req: StopRequest): Promise<void> {
    if (req.final) await this.close();
  }

  async shutdown(): Promise<void> {
    await this.close();
  }

  private open(req: TaskHookContext): void {
    if (this.serving) return;
    const file = `${req.taskDir.secrets}/${TASK_API_SOCKET}`;
    // Through a descriptor of secrets/: a socket path is limited to 107 bytes, and an alloc dir can be deeper.
    let dir: number;
    try {
      dir = openSync(req.taskDir.secrets, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, path: file }, "no task API socket: cannot open the secrets dir");
      return;
    }
    try {
      // A socket left by an agent that stopped; unlink never follows a symlink the task put there.
      // One unlink, not rmSync's lstat and unlink: a new task's secrets/ has none (issue 35: the start path).
      removeIfPresent(file);
      const server = this.serve(`/proc/self/fd/${dir}/${TASK_API_SOCKET}`, {
        allocId: req.alloc.ID,
        taskName: req.task.Name,
        jobId: req.alloc.JobID,
        namespace: req.alloc.Namespace,
        group: req.alloc.TaskGroup,
      });
      this.serving = { server, dir };
      // The task's user must be able to connect; lchown never follows a symlink swapped in meanwhile.
      const user = taskUser(req.task);
      const owner = user === undefined ? null : lookupUser(user);
      if (owner) lchownSync(file, owner.uid, owner.gid);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, path: file }, "no task API socket");
    } finally {
      if (!this.serving) closeSync(dir);
    }
  }

  private async close(): Promise<void> {
    const closing = this.serving;
    this.serving = undefined;
    if (!closing) return;
    try {
      await closing.server.close();
    } finally {
      closeSync(closing.dir);
    }
  }
}

export function taskApiHook(serve: ServeTaskApi, logger: Logger): TaskHook {
  return new TaskApiHook(serve, logger);
}
