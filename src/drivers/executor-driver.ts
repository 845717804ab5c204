/**
 * A driver whose tasks each run under their own executor (raw_exec, and exec
 * with isolation). Subclasses say only how they fingerprint, which keys of a
 * job's `config` block they read, and what isolation, if any, goes into the
 * launch request. Every task gets a pids limit: the job's `pids_limit`, else
 * the client's, never above the client's.
 *
 * startTask:  adopt an executor already running this alloc/task (its agent
 *             died before the handle was persisted), else start an executor,
 *             launch, and return the handle. A failed launch destroys the
 *             executor, so nothing is left behind.
 * recoverTask: connect to the handle's socket; the executor must answer
 *             `version` as the stored pid with the stored task. No answer:
 *             the exit file tells how the task ended; no exit file either and
 *             the executor provably dead: the task's cgroup is emptied and
 *             TaskRecoveryError says so.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { CgroupLayout } from "../cgroups/detect.ts";
import { taskCgroupPaths, type CgroupPlacement } from "../cgroups/paths.ts";
import type { TaskResourceUsage } from "../stats/task.ts";
import { processStartTime } from "../stats/process.ts";
import { connectExecutor, ExecutorMismatchError, startExecSession, startExecutor, type ExecSession, type ExecutorConnection } from "../executor/client.ts";
import { executorFiles } from "../executor/files.ts";
import { checkLaunch, LaunchError } from "../executor/launch.ts";
import { executorPrefix } from "../executor/naming.ts";
import { EXECUTOR_PROTOCOL, KILL_TIMEOUT_MS, type ExecResult, type LaunchRequest, type VersionResult } from "../executor/protocol.ts";
import type { ExitResult } from "../structs/exit-result.ts";
import { RpcConnectionError } from "../rpc/client.ts";
import * as v from "valibot";
import { parseOrThrow, ValidationError } from "../lib/validation.ts";
import { ExecDriverConfigSchema } from "../structs/driver-config.ts";
import {
  TaskConfigSchema,
  taskIdOf,
  TaskNotFoundError,
  TaskRecoveryError,
  type DriverPlugin,
  type Fingerprint,
  type ParsedTaskConfig,
  type TaskConfig,
  type TaskStatus,
  UnrunnableTaskError,
} from "./driver.ts";
import { ExecutorTask, executorGone, isSameProcess, killLeftovers, removeExecutorFiles, type DriverLog } from "./executor-task.ts";
import { HANDLE_VERSION, TaskHandleSchema, type TaskHandle } from "./handle.ts";

/** Room an RPC gets beyond the time the executor itself may take (a loaded host, a slow kill). */
const RPC_MARGIN_MS = 5_000;
/** Quick calls (signal, stats, update, destroy) that should never take long. */
const QUICK_CALL_TIMEOUT_MS = 10_000;

export interface ExecutorDriverOptions {
  /** Where executors' sockets and files live; short, for the 107-byte socket path limit (<data_dir>/run). */
  runDir: string;
  /** The host's cgroup layout (detectCgroups()); mode "none" runs tasks without cgroups. */
  cgroups: CgroupLayout;
  /** MHz of one core (the agent's fingerprint), for TotalTicks in stats. */
  mhzPerCore: number;
  /** The command that runs drover (a binary, or a runtime and src/main.ts) for executors; this program when absent. */
  drover?: readonly string[];
  log?: DriverLog;
  /** client.pids_limit: each task's pids limit unless its job asks for less, and the most it may ask; 0 = none. */
  pidsLimit?: number;
}

/** The `config` keys every executor driver reads besides command and args (structs/driver-config.ts defines them). */
export const BaseDriverConfigSchema = v.omit(ExecDriverConfigSchema, ["command", "args", "syscall_add"]);
export type BaseDriverConfig = v.InferOutput<typeof BaseDriverConfigSchema>;

export abstract class ExecutorDriver<C extends BaseDriverConfig = BaseDriverConfig> implements DriverPlugin {
  abstract readonly name: string;
  abstract fingerprint(): Fingerprint;
  /** The keys of a job's `config` block this driver reads; any other is refused by name. */
  protected abstract readonly configSchema: v.GenericSchema<unknown, C>;
  /** Which cgroup hierarchies its tasks are placed in (cgroups/paths.ts). */
  protected abstract readonly cgroupPlacement: CgroupPlacement;
  /** The launch request's `isolation` for this task; undefined runs it as raw_exec does. */
  protected abstract isolation(config: ParsedTaskConfig, driverConfig: C): unknown;

  private readonly tasks = new Map<string, ExecutorTask>();
  protected readonly log: DriverLog;

  constructor(protected readonly options: ExecutorDriverOptions) {
    this.log = options.log ?? (() => {});
  }

  async startTask(input: TaskConfig): Promise<{ handle: TaskHandle }> {
    const config = parseOrThrow(TaskConfigSchema, input, "task config");
    const health = this.fingerprint();
    if (!health.healthy) throw new Error(`driver ${this.name} cannot start tasks: ${health.description}`);
    const id = taskIdOf(config.allocId, config.taskName);
    const known = this.tasks.get(id);
    if (known && !known.exit) throw new Error(`task ${id} is already running (pid ${known.handle.task.pid})`);
    this.tasks.delete(id);

    const adopted = await this.adopt(config);
    if (adopted) return { handle: adopted };

    const driverConfig = parseOrThrow(this.configSchema, config.driverConfig, "config");
    const cgroup = this.options.cgroups.mode === "none" ? null : taskCgroupPaths(this.options.cgroups, config.cgroupParent, config.allocId, config.taskName, this.cgroupPlacement);
    const request: LaunchRequest = {
      allocId: config.allocId,
      taskName: config.taskName,
      argv: [config.command, ...config.args],
      env: config.env,
      cwd: config.cwd,
      user: config.user,
      stdoutPath: config.stdoutPath,
      stderrPath: config.stderrPath,
      resources: { ...config.resources, pidsLimit: this.pidsLimit(driverConfig.pids_limit) },
      cgroup,
      mhzPerCore: this.options.mhzPerCore,
      // Built before the executor starts: a config the driver refuses must leave no executor behind.
      isolation: this.isolation(config, driverConfig),
    };
    // Checked here as well as in the executor, before one starts: what cannot run as defined is not retried.
    try {
      checkLaunch(request);
    } catch (err) {
      if (err instanceof LaunchError) throw new UnrunnableTaskError(`start task ${id}: ${err.message}`);
      throw err;
    }
    const started = await startExecutor({
      runDir: this.options.runDir,
      allocId: config.allocId,
      taskName: config.taskName,
      drover: this.options.drover,
    });
    let launched;
    let drover: string;
    try {
      // Asked before the launch: once a task runs, no failure may leave it without a handle.
      drover = (await started.connection.call("version", {}, QUICK_CALL_TIMEOUT_MS)).version;
      launched = await started.connection.call("launch", request);
    } catch (err) {
      // The executor undoes the launch (cgroup, descriptors) and exits; its files go with it.
      await started.connection.call("destroy", {}, QUICK_CALL_TIMEOUT_MS).catch(() => undefined);
      started.connection.close();
      removeExecutorFiles(started.files.socket);
      throw new Error(`start task ${id}: ${(err as Error).message}`);
    }
    const handle: TaskHandle = {
      version: HANDLE_VERSION,
      driver: this.name,
      allocId: config.allocId,
      taskName: config.taskName,
      executor: {
        pid: started.pid,
        startTime: started.startTime,
        socket: started.files.socket,
        exitFile: started.files.exitFile,
        log: started.files.log,
        protocol: EXECUTOR_PROTOCOL,
        drover,
      },
      task: { pid: launched.pid, startTime: launched.startTime },
      cgroup,
      killSignal: config.killSignal,
      startedAt: launched.startedAt,
    };
    this.attach(handle, started.connection);
    return { handle };
  }

  /** The task's pids limit: what its job asks for, at most the client's; the client's when it asks nothing. */
  private pidsLimit(asked: number | undefined): number {
    const ceiling = this.options.pidsLimit ?? 0;
    if (asked === undefined) return ceiling;
    if (ceiling > 0 && asked > ceiling) throw new ValidationError("config", [`pids_limit: ${asked} is above this client's pids_limit (${ceiling})`]);
    return asked;
  }

  /**
   * An executor already running this alloc/task, left by an agent that died
   * before it persisted the handle: adopt it rather than start the task twice.
   * Idle or finished ones (nobody recorded them) are destroyed; dead ones'
   * files are removed.
   */
  private async adopt(config: ParsedTaskConfig): Promise<TaskHandle | null> {
    const prefix = executorPrefix(config.allocId, config.taskName);
    let names: string[];
    try {
      names = readdirSync(this.options.runDir).filter((name) => name.startsWith(prefix) && name.endsWith(".sock"));
    } catch {
      return null;
    }
    let adopted: TaskHandle | null = null;
    for (const name of names) {
      const socket = join(this.options.runDir, name);
      let found: { connection: ExecutorConnection; version: VersionResult };
      try {
        found = await connectExecutor(socket);
      } catch (err) {
        if (err instanceof RpcConnectionError) removeExecutorFiles(socket);
        continue;
      }
      const { connection, version } = found;
      const ours = version.allocId === config.allocId && version.taskName === config.taskName;
      if (!adopted && ours && version.state === "running" && version.task) {
        adopted = this.handleFor(config, socket, { ...version, task: version.task });
        this.log(`adopted executor ${version.pid} already running ${adopted.allocId}/${adopted.taskName} (pid ${version.task.pid})`);
        this.attach(adopted, connection);
        continue;
      }
      if (version.state === "idle" || ours) await connection.call("destroy", {}, QUICK_CALL_TIMEOUT_MS).catch(() => undefined);
      connection.close();
    }
    return adopted;
  }

  private handleFor(config: ParsedTaskConfig, socket: string, version: VersionResult & { task: NonNullable<VersionResult["task"]> }): TaskHandle {
    const files = executorFiles(socket.replace(/\.sock$/, ""));
    return {
      version: HANDLE_VERSION,
      driver: this.name,
      allocId: config.allocId,
      taskName: config.taskName,
      executor: {
        pid: version.pid,
        startTime: processStartTime(version.pid) ?? 0,
        socket,
        exitFile: files.exitFile,
        log: files.log,
        protocol: version.protocol,
        drover: version.version,
      },
      task: { pid: version.task.pid, startTime: version.task.startTime },
      cgroup: this.options.cgroups.mode === "none" ? null : taskCgroupPaths(this.options.cgroups, config.cgroupParent, config.allocId, config.taskName, this.cgroupPlacement),
      killSignal: config.killSignal,
      startedAt: version.task.startedAt,
    };
  }

  private attach(handle: TaskHandle, connection: ExecutorConnection | null): ExecutorTask {
    const task = new ExecutorTask(handle, connection, this.log);
    this.tasks.set(task.id, task);
    task.watch();
    return task;
  }

  async recoverTask(input: TaskHandle): Promise<void> {
    const handle = parseOrThrow(TaskHandleSchema, input, "driver handle");
    const id = taskIdOf(handle.allocId, handle.taskName);
    if (this.tasks.has(id)) return;
    const { pid, startTime, socket } = handle.executor;
    let reason: string;
    try {
      const { connection, version } = await connectExecutor(socket, pid);
      if (version.task?.pid === handle.task.pid) {
        this.attach(handle, connection);
        return;
      }
      connection.close();
      reason = `executor ${pid} at ${socket} supervises pid ${version.task?.pid ?? "none"}, not the task's ${handle.task.pid}`;
    } catch (err) {
      if (!(err instanceof RpcConnectionError || err instanceof ExecutorMismatchError)) throw err;
      reason = `executor ${pid} at ${socket} does not answer (${err.message})`;
    }
    // No executor to talk to: the exit file says how the task ended, if it did.
    const task = new ExecutorTask(handle, null, this.log);
    const stored = task.storedResult();
    if (stored) {
      task.settleFrom(stored);
      this.tasks.set(id, task);
      return;
    }
    if (isSameProcess(pid, startTime)) throw new TaskRecoveryError(`${reason}; its process still runs, so the task was left to it`);
    const done = await killLeftovers(handle);
    removeExecutorFiles(handle.executor.socket);
    throw new TaskRecoveryError(`${reason} and left no exit result; ${done}`);
  }

  private task(taskId: string): ExecutorTask {
    const task = this.tasks.get(taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    return task;
  }

  waitTask(taskId: string): Promise<ExitResult> {
    return this.task(taskId).result;
  }

  async stopTask(taskId: string, timeoutMs: number, signal?: string): Promise<void> {
    const task = this.task(taskId);
    if (task.exit) return;
    const params = { signal: signal ?? task.handle.killSignal, graceMs: timeoutMs };
    await task.live().call("shutdown", params, timeoutMs + KILL_TIMEOUT_MS + RPC_MARGIN_MS);
    await task.result;
  }

  async destroyTask(taskId: string, force: boolean): Promise<void> {
    const task = this.tasks.get(taskId);
    if (!task) return;
    if (!task.exit && !force) throw new Error(`task ${taskId} is still running: stop it first, or destroy with force`);
    if (task.connected) {
      // The executor kills what is left, removes the cgroup and its files, then exits.
      await task
        .live()
        .call("destroy", {}, KILL_TIMEOUT_MS + RPC_MARGIN_MS)
        .catch((err: Error) => this.log(`destroy ${taskId}: ${err.message}`));
    } else if (!task.exit) {
      await killLeftovers(task.handle);
    }
    task.close();
    if (!(await executorGone(task.handle))) this.log(`executor ${task.handle.executor.pid} of ${taskId} still runs after destroy`);
    removeExecutorFiles(task.handle.executor.socket);
    this.tasks.delete(taskId);
  }

  inspectTask(taskId: string): TaskStatus {
    const task = this.task(taskId);
    const { handle, exit } = task;
    return {
      id: taskId,
      allocId: handle.allocId,
      taskName: handle.taskName,
      state: exit ? "exited" : "running",
      startedAt: handle.startedAt,
      completedAt: exit?.finishedAt ?? null,
      exitResult: exit,
      driverAttributes: { pid: String(handle.task.pid), executor_pid: String(handle.executor.pid) },
    };
  }

  async signalTask(taskId: string, signal: string): Promise<void> {
    await this.task(taskId).live().call("signal", { signal }, QUICK_CALL_TIMEOUT_MS);
  }

  execTask(taskId: string, argv: readonly string[], timeoutMs: number): Promise<ExecResult> {
    // timeoutMs 0 lets the command run as long as it takes; the call waits as long.
    return this.task(taskId)
      .live()
      .call("exec", { argv: [...argv], timeoutMs }, timeoutMs > 0 ? timeoutMs + KILL_TIMEOUT_MS + RPC_MARGIN_MS : undefined);
  }

  execStreamTask(taskId: string, argv: readonly string[], tty: boolean): Promise<ExecSession> {
    const task = this.task(taskId);
    return startExecSession(task.live(), task.handle.executor.pid, argv, tty);
  }

  taskStats(taskId: string): Promise<TaskResourceUsage> {
    return this.task(taskId).live().call("stats", {}, QUICK_CALL_TIMEOUT_MS);
  }

  /** Hangs up on every executor (agent shutdown); tasks and executors keep running. */
  detachAll(): void {
    for (const task of this.tasks.values()) task.close();
    this.tasks.clear();
  }
}
