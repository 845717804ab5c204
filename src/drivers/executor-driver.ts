/**
 * A driver whose tasks run under executors (raw_exec, and exec with
 * isolation), several tasks to an executor (executor-pool.ts). Subclasses
 * say only how they fingerprint, which keys of a job's `config` block they
 * read, and what isolation, if any, goes into the launch request. Every task
 * gets a pids limit: the job's `pids_limit`, else the client's, never above
 * the client's.
 *
 * startTask:  adopt a task an executor already runs for this alloc/task (its
 *             agent died before the handle was persisted), else take a slot in
 *             an executor, launch under a fresh task key, and return the
 *             handle. A failed launch frees the slot, so nothing is left behind.
 * recoverTask: attach to the handle's executor (one connection per executor);
 *             it must answer `version` as the stored pid, supervising the
 *             stored task. No answer: the exit file tells how the task ended;
 *             no exit file either and the executor provably dead: rescue (a
 *             task still running under the host reaper is adopted by another
 *             executor, one that ended has its status from the reaper), else
 *             the task's cgroup is emptied and TaskRecoveryError says so.
 * rescue:     the same, when a running task's executor dies under this agent.
 * destroyTask: the executor forgets the task; the slot is freed, and an
 *             executor left with no task exits.
 */
import { join } from "node:path";
import type { CgroupLayout } from "../cgroups/detect.ts";
import { taskCgroupPaths, type CgroupPlacement } from "../cgroups/paths.ts";
import type { TaskResourceUsage } from "../stats/task.ts";
import { ExecutorMismatchError, startExecSession, type ExecSession } from "../executor/client.ts";
import { executorFiles, writeExitResult } from "../executor/files.ts";
import { openTaskCgroup } from "../cgroups/task-cgroup.ts";
import type { CgroupPaths } from "../cgroups/paths.ts";
import { parentOf } from "../stats/process.ts";
import { checkLaunch, LaunchError } from "../executor/launch.ts";
import { HostReaperLink } from "../executor/reaper-client.ts";
import { taskKey } from "../executor/naming.ts";
import { KILL_TIMEOUT_MS, type ExecResult, type LaunchRequest, type SupervisedTask } from "../executor/protocol.ts";
import type { ExitResult } from "../structs/exit-result.ts";
import { isUnknownMethod, RpcConnectionError } from "../rpc/client.ts";
import * as v from "valibot";
import { parseOrThrow, ValidationError } from "../lib/validation.ts";
import { DEFAULT_TASKS_PER_EXECUTOR } from "../lib/executor-sharing.ts";
import { DEFAULT_KILL_SIGNAL } from "../lib/signals.ts";
import { ExecDriverConfigSchema } from "../structs/driver-config.ts";
import type { IsolationSpecInput } from "../nsenter/spec.ts";
import {
  TaskConfigSchema,
  taskIdOf,
  TaskNotFoundError,
  TaskRecoveryError,
  type DriverEvents,
  type DriverPlugin,
  type Fingerprint,
  type ParsedTaskConfig,
  type TaskConfig,
  type TaskStatus,
  UnrunnableTaskError,
} from "./driver.ts";
import { ExecutorPool, QUICK_CALL_TIMEOUT_MS, removeExecutorOwnFiles, supervisedTasks, type ExecutorLink } from "./executor-pool.ts";
import { ExecutorTask, isSameProcess, killLeftovers, removeTaskFiles, type DriverLog, type Rescue } from "./executor-task.ts";
import { HANDLE_VERSION, TaskHandleSchema, withoutLaunch, type TaskHandle } from "./handle.ts";

/** The task's command and args; raw_exec and exec need a command. */
export function commandOf(config: ParsedTaskConfig): [string, ...string[]] {
  if (config.command === undefined) throw new ValidationError("config", ["command: is required"]);
  return [config.command, ...config.args];
}

/** Room an RPC gets beyond the time the executor itself may take (a loaded host, a slow kill). */
const RPC_MARGIN_MS = 5_000;

export interface ExecutorDriverOptions {
  /** Where executors' sockets and files live; short, for the 107-byte socket path limit (<data_dir>/run). */
  runDir: string;
  /** The host's cgroup layout (detectCgroups()); mode "none" runs tasks without cgroups. */
  cgroups: CgroupLayout;
  /** MHz of one core (the agent's fingerprint), for TotalTicks in stats. */
  mhzPerCore: number;
  /** The command that runs drover (a binary, or a runtime and src/main.ts) for executors; this program when absent. */
  drover?: readonly string[];
  /** Most tasks one executor supervises (DEFAULT_TASKS_PER_EXECUTOR when absent); 1: an executor per task. */
  tasksPerExecutor?: number;
  log?: DriverLog;
  /** client.pids_limit: each task's pids limit unless its job asks for less, and the most it may ask; 0 = none. */
  pidsLimit?: number;
  /**
   * Start executors under the host reaper (executor/host-reaper.ts), so a
   * task outlives its executor's death; default true. false: the agent starts
   * them itself, and a dead executor's tasks are killed and restarted.
   */
  hostReaper?: boolean;
  /** A task's handle changed (another executor adopted it): the caller persists it, so a later agent reattaches there. */
  onHandleChange?: (handle: TaskHandle) => void;
  /**
   * The launch request of a task's persisted handle, read when another executor must adopt the
   * task. Given, the driver keeps its handles without their launch requests (handle.ts's
   * withoutLaunch); absent, in memory with them.
   */
  storedLaunch?: (allocId: string, taskName: string) => LaunchRequest | undefined;
}

/** How long the reaper may take to report the end of a task that ended as its executor died (it reaps at once). */
const ORPHAN_STATUS_WAIT_MS = 1_000;
/** How long a dead executor's last threads may take to exit and hand its children to the reaper. */
const REPARENT_WAIT_MS = 5_000;
const REPARENT_POLL_MS = 5;

/** The `config` keys every executor driver reads besides command and args (structs/driver-config.ts defines them). */
export const BaseDriverConfigSchema = v.omit(ExecDriverConfigSchema, ["command", "args", "syscall_add", "pid_mode", "ipc_mode", "cap_add", "cap_drop"]);
export type BaseDriverConfig = v.InferOutput<typeof BaseDriverConfigSchema>;

export abstract class ExecutorDriver<C extends BaseDriverConfig = BaseDriverConfig> implements DriverPlugin {
  abstract readonly name: string;
  abstract fingerprint(): Fingerprint;
  /** The keys of a job's `config` block this driver reads; any other is refused by name. */
  protected abstract readonly configSchema: v.GenericSchema<unknown, C>;
  /** Which cgroup hierarchies its tasks are placed in (cgroups/paths.ts). */
  protected abstract readonly cgroupPlacement: CgroupPlacement;
  /**
   * The launch request's `isolation` for this task (its argv is the task's);
   * undefined runs the task's command as raw_exec does. A driver may prepare
   * things first (docker pulls its image).
   */
  protected abstract isolation(config: ParsedTaskConfig, driverConfig: C, events: DriverEvents): IsolationSpecInput | undefined | Promise<IsolationSpecInput | undefined>;

  /** What stopTask sends when its caller names no signal: the job's kill_signal, else Nomad's default. */
  protected killSignalOf(config: ParsedTaskConfig): string {
    return config.killSignal ?? DEFAULT_KILL_SIGNAL;
  }

  /** The command a task without an isolation spec runs (raw_exec). */
  protected launchArgv(config: ParsedTaskConfig): [string, ...string[]] {
    return commandOf(config);
  }

  /** The launch request's `user`, checked on the host; a driver whose users live elsewhere (an image) gives none. */
  protected launchUser(config: ParsedTaskConfig): string | undefined {
    return config.user;
  }

  private readonly tasks = new Map<string, ExecutorTask>();
  /** One function for every task, not a closure per task (issue 35: what a running task keeps). */
  private readonly rescueTask: Rescue = (task) => this.rescue(task);
  private readonly pool: ExecutorPool;
  private readonly reaper: HostReaperLink | null;
  private runsFound: Promise<Record<string, ExecutorLink[]>> | null = null;
  protected readonly log: DriverLog;

  constructor(protected readonly options: ExecutorDriverOptions) {
    this.log = options.log ?? (() => {});
    this.reaper = options.hostReaper === false ? null : HostReaperLink.for(options.runDir, options.drover);
    this.pool = new ExecutorPool({
      runDir: options.runDir,
      tasksPerExecutor: options.tasksPerExecutor ?? DEFAULT_TASKS_PER_EXECUTOR,
      drover: options.drover,
      log: this.log,
      ...(this.reaper ? { reaper: this.reaper } : {}),
    });
  }

  /** An executor's start (a process, its runtime) runs beside the task's hooks instead of after them. */
  prepare(): void {
    void this.pool.warm();
  }

  async startTask(input: TaskConfig, events: DriverEvents = () => {}): Promise<{ handle: TaskHandle }> {
    const config = parseOrThrow(TaskConfigSchema, input, "task config");
    const health = this.fingerprint();
    if (!health.healthy) throw new Error(`driver ${this.name} cannot start tasks: ${health.description}`);
    const id = taskIdOf(config.allocId, config.taskName);
    const known = this.tasks.get(id);
    if (known && !known.exit) throw new Error(`task ${id} is already running (pid ${known.handle.task.pid})`);
    this.tasks.delete(id);

    const adopted = await this.adopt(config);
    if (adopted) return { handle: adopted };

    const request = await this.launchRequest(config, events);
    const link = await this.pool.acquire();
    let launched;
    try {
      launched = await link.live().call("launch", request);
    } catch (err) {
      // The executor undoes a failed launch itself (cgroup, descriptors); the slot is freed.
      if (link.connected) await link.live().call("destroy", { key: request.key }, QUICK_CALL_TIMEOUT_MS).catch(() => undefined);
      await this.pool.release(link);
      throw new Error(`start task ${id}: ${(err as Error).message}`);
    }
    const { key, ...launch } = request;
    // The launch request's cgroup paths, not a second copy of them.
    const handle = { ...this.handleFor(config, link, key, launched, launch.cgroup), launch };
    this.attach(handle, link);
    return { handle };
  }

  /**
   * The launch request, built before a slot is taken: a config the driver refuses leaves nothing
   * behind. What cannot run as the job defines it (a `config` key this driver refuses, a command,
   * cwd or user that is not there; the executor checks the latter again) fails the task at once:
   * no restart could fix it.
   */
  private async launchRequest(config: ParsedTaskConfig, events: DriverEvents): Promise<LaunchRequest & { key: string }> {
    try {
      const driverConfig = parseOrThrow(this.configSchema, config.driverConfig, "config");
      const isolation = await this.isolation(config, driverConfig, events);
      const request = {
        key: taskKey(config.allocId, config.taskName),
        allocId: config.allocId,
        taskName: config.taskName,
        argv: isolation ? isolation.argv : this.launchArgv(config),
        // An image's own variables are under the task's (docker); exec sessions get the same.
        env: isolation ? isolation.env : config.env,
        cwd: config.cwd,
        user: this.launchUser(config),
        stdoutPath: config.stdoutPath,
        stderrPath: config.stderrPath,
        resources: { ...config.resources, pidsLimit: this.pidsLimit(driverConfig.pids_limit) },
        cgroup: this.cgroupOf(config),
        mhzPerCore: this.options.mhzPerCore,
        isolation,
      };
      checkLaunch(request);
      return request;
    } catch (err) {
      if (err instanceof ValidationError || err instanceof LaunchError) {
        throw new UnrunnableTaskError(`start task ${taskIdOf(config.allocId, config.taskName)}: ${err.message}`);
      }
      throw err;
    }
  }

  private cgroupOf(config: ParsedTaskConfig) {
    return this.options.cgroups.mode === "none" ? null : taskCgroupPaths(this.options.cgroups, config.cgroupParent, config.allocId, config.taskName, this.cgroupPlacement);
  }

  /** The task's pids limit: what its job asks for, at most the client's; the client's when it asks nothing. */
  private pidsLimit(asked: number | undefined): number {
    const ceiling = this.options.pidsLimit ?? 0;
    if (asked === undefined) return ceiling;
    if (ceiling > 0 && asked > ceiling) throw new ValidationError("config", [`pids_limit: ${asked} is above this client's pids_limit (${ceiling})`]);
    return asked;
  }

  /**
   * A task an executor already runs for this alloc/task, left by an agent
   * that died before it persisted the handle: adopted rather than started
   * twice. Runs of it that ended (nobody recorded them) are destroyed. Only
   * executors this agent found at its start can hold one.
   */
  private async adopt(config: ParsedTaskConfig): Promise<TaskHandle | null> {
    let adopted: TaskHandle | null = null;
    for (const link of (await this.foundRuns())[taskIdOf(config.allocId, config.taskName)] ?? []) {
      if (link.retired) continue;
      let current: SupervisedTask[];
      try {
        current = supervisedTasks(link.socket, await link.live().call("version", {}, QUICK_CALL_TIMEOUT_MS));
      } catch {
        continue;
      }
      for (const task of current.filter((each) => this.isRunOf(each, config) && !this.isAttached(link, each.key))) {
        if (!adopted && task.state === "running" && task.task) {
          adopted = this.handleFor(config, link, link.protocol < 2 ? undefined : task.key, task.task);
          this.log(`adopted ${adopted.allocId}/${adopted.taskName} (pid ${task.task.pid}) already running under executor ${link.pid}`);
          this.attach(adopted, link);
          continue;
        }
        await link.live().call("destroy", link.protocol < 2 ? {} : { key: task.key }, QUICK_CALL_TIMEOUT_MS).catch(() => undefined);
        await this.pool.release(link);
      }
    }
    return adopted;
  }

  /** Which executors found at start ran which task (a lookup, not a scan, for every start after a restart). */
  private foundRuns(): Promise<Record<string, ExecutorLink[]>> {
    this.runsFound ??= this.pool.discover().then((found) => {
      const runs: Record<string, ExecutorLink[]> = {};
      for (const { link, version } of found) {
        for (const task of supervisedTasks(link.socket, version)) {
          const links = (runs[taskIdOf(task.allocId, task.taskName)] ??= []);
          if (!links.includes(link)) links.push(link);
        }
      }
      return runs;
    });
    return this.runsFound;
  }

  private isRunOf(task: SupervisedTask, config: ParsedTaskConfig): boolean {
    return task.allocId === config.allocId && task.taskName === config.taskName;
  }

  /** Whether a task this driver follows is the one `key` names in that executor. */
  private isAttached(link: ExecutorLink, key: string): boolean {
    for (const task of this.tasks.values()) {
      if (task.link === link && (task.handle.executor.key ?? key) === key) return true;
    }
    return false;
  }

  private handleFor(
    config: ParsedTaskConfig,
    link: ExecutorLink,
    key: string | undefined,
    task: { pid: number; startTime: number; startedAt: number },
    cgroup = this.cgroupOf(config),
  ): TaskHandle {
    return {
      version: HANDLE_VERSION,
      driver: this.name,
      allocId: config.allocId,
      taskName: config.taskName,
      executor: this.executorOf(link, key),
      task: { pid: task.pid, startTime: task.startTime },
      cgroup,
      killSignal: this.killSignalOf(config),
      startedAt: task.startedAt,
    };
  }

  /** A handle's executor part: the link's process and socket, and the task's key and exit file. */
  private executorOf(link: ExecutorLink, key: string | undefined): TaskHandle["executor"] {
    const base = key === undefined ? link.socket.replace(/\.sock$/, "") : join(this.options.runDir, key);
    return {
      pid: link.pid,
      startTime: link.startTime,
      socket: link.socket,
      exitFile: executorFiles(base).exitFile,
      log: link.log,
      protocol: link.protocol,
      drover: link.drover,
      ...(key === undefined ? {} : { key }),
    };
  }

  /**
   * A task whose executor died (ExecutorTask's Rescue). Still running as
   * the host reaper's child: another executor adopts it and the new handle
   * is persisted. Ended meanwhile: its end comes from the reaper, which
   * reaped it. Otherwise (its parent is init: its executor was not under a
   * reaper) null: the caller kills what is left, as before the reaper.
   */
  private async rescue(task: ExecutorTask): Promise<ExitResult | "adopted" | null> {
    if (!this.reaper) return null;
    const { handle } = task;
    const { pid, startTime } = handle.task;
    const died = `executor (pid ${handle.executor.pid}) of ${task.id} died`;
    if (isSameProcess(pid, startTime)) {
      const parent = await reparented(pid, handle.executor.pid);
      await this.reaper.ensure().catch(() => undefined);
      if (parent === null || parent !== this.reaper.pid) {
        this.log(`${died}; its task (pid ${pid}) has parent ${parent}, not the host reaper (pid ${this.reaper.pid ?? "none"}): its executor was not started under the reaper, so the task is killed and restarted by its policy`);
        return null;
      }
      const launch = handle.launch ?? this.options.storedLaunch?.(handle.allocId, handle.taskName);
      if (!launch || handle.executor.key === undefined) {
        this.log(`${died}; its handle lacks the launch request another executor would need, so the task is killed and restarted by its policy`);
        return null;
      }
      return this.adoptOrphan(task, launch, handle.executor.key);
    }
    const status = await this.reaper.exitStatus(pid, startTime, ORPHAN_STATUS_WAIT_MS).catch(() => null);
    if (!status) return null;
    const oomKilled = handle.cgroup ? oomKilledIn(handle.cgroup) : false;
    const done = await killLeftovers(handle);
    const result: ExitResult = { exitCode: status.exitCode, signal: status.signal, oomKilled, finishedAt: Date.now() };
    try {
      writeExitResult(handle.executor.exitFile, result);
    } catch (err) {
      this.log(`${task.id}: exit result not saved: ${(err as Error).message}`);
    }
    this.log(`${died}; the task (pid ${pid}) ended meanwhile with code ${status.exitCode} signal ${status.signal}, as the host reaper reports; ${done}`);
    return result;
  }

  private async adoptOrphan(task: ExecutorTask, launch: LaunchRequest, key: string): Promise<"adopted" | null> {
    const { handle } = task;
    const link = await this.pool.acquire();
    try {
      await link.live().call("adopt", { ...launch, key, task: { ...handle.task, startedAt: handle.startedAt } }, QUICK_CALL_TIMEOUT_MS);
    } catch (err) {
      await this.pool.release(link);
      this.log(`executor ${link.pid} could not adopt ${task.id} (pid ${handle.task.pid}): ${(err as Error).message}; the task is killed and restarted by its policy`);
      return null;
    }
    const dead = task.link;
    // Persisted with its launch request: the next adopter (of this agent or a later one) needs it.
    const moved = { ...handle, executor: this.executorOf(link, key), launch };
    task.rebind(this.kept(moved), link);
    this.options.onHandleChange?.(moved);
    // The dead executor's slot: once its last task moved, its files go.
    if (dead) await this.pool.release(dead);
    this.log(`executor (pid ${handle.executor.pid}) of ${task.id} died; executor ${link.pid} adopted the task (pid ${handle.task.pid}), which runs on`);
    return "adopted";
  }

  /** What of a handle stays in memory: its launch request only where it cannot be read back. */
  private kept(handle: TaskHandle): TaskHandle {
    return this.options.storedLaunch ? withoutLaunch(handle) : handle;
  }

  private attach(handle: TaskHandle, link: ExecutorLink): ExecutorTask {
    const task = new ExecutorTask(this.kept(handle), link, this.log, this.rescueTask);
    this.tasks.set(task.id, task);
    task.watch();
    return task;
  }

  async recoverTask(input: TaskHandle): Promise<void> {
    const handle = parseOrThrow(TaskHandleSchema, input, "driver handle");
    const id = taskIdOf(handle.allocId, handle.taskName);
    if (this.tasks.has(id)) return;
    const { pid, startTime, socket, key } = handle.executor;
    let reason: string;
    try {
      const { link, version } = await this.pool.attach(socket, { pid, startTime });
      const supervised = supervisedTasks(socket, version).find((task) => key === undefined || task.key === key);
      if (supervised?.task?.pid === handle.task.pid) {
        this.attach(handle, link);
        return;
      }
      reason = `executor ${pid} at ${socket} supervises pid ${supervised?.task?.pid ?? "none"} as this task, not the task's ${handle.task.pid}`;
    } catch (err) {
      if (!(err instanceof RpcConnectionError || err instanceof ExecutorMismatchError)) throw err;
      reason = `executor ${pid} at ${socket} does not answer (${err.message})`;
    }
    // No executor to talk to: the exit file says how the task ended, if it did.
    const task = new ExecutorTask(handle, null, this.log, this.rescueTask);
    const stored = task.storedResult();
    if (stored) {
      task.settleFrom(stored);
      this.tasks.set(id, task);
      return;
    }
    if (isSameProcess(pid, startTime)) throw new TaskRecoveryError(`${reason}; its process still runs, so the task was left to it`);
    // The executor is dead: its task may live on under the host reaper, or have left its end there.
    const rescued = await this.rescue(task);
    if (rescued) {
      this.tasks.set(id, task);
      if (rescued === "adopted") task.watch();
      else task.settleFrom(rescued);
      return;
    }
    const done = await killLeftovers(handle);
    removeTaskFiles(handle);
    removeExecutorOwnFiles(socket);
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
    await task.call("shutdown", params, timeoutMs + KILL_TIMEOUT_MS + RPC_MARGIN_MS);
    await task.result;
  }

  async destroyTask(taskId: string, force: boolean): Promise<void> {
    const task = this.tasks.get(taskId);
    if (!task) return;
    if (!task.exit && !force) throw new Error(`task ${taskId} is still running: stop it first, or destroy with force`);
    if (task.connected) {
      // The executor kills what is left, removes the cgroup and the task's files, and forgets it.
      await task.call("destroy", {}, KILL_TIMEOUT_MS + RPC_MARGIN_MS).catch((err: Error) => this.log(`destroy ${taskId}: ${err.message}`));
    } else if (!task.exit) {
      await killLeftovers(task.handle);
    }
    task.close();
    removeTaskFiles(task.handle);
    this.tasks.delete(taskId);
    if (task.link) await this.pool.release(task.link);
    else if (!isSameProcess(task.handle.executor.pid, task.handle.executor.startTime)) removeExecutorOwnFiles(task.handle.executor.socket);
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
    await this.task(taskId).call("signal", { signal }, QUICK_CALL_TIMEOUT_MS);
  }

  execTask(taskId: string, argv: readonly string[], timeoutMs: number): Promise<ExecResult> {
    // timeoutMs 0 lets the command run as long as it takes; the call waits as long.
    return this.task(taskId).call("exec", { argv: [...argv], timeoutMs }, timeoutMs > 0 ? timeoutMs + KILL_TIMEOUT_MS + RPC_MARGIN_MS : undefined);
  }

  execStreamTask(taskId: string, argv: readonly string[], tty: boolean): Promise<ExecSession> {
    const task = this.task(taskId);
    return startExecSession(task.live(), task.handle.executor.pid, task.handle.executor.key, argv, tty);
  }

  taskStats(taskId: string): Promise<TaskResourceUsage> {
    return this.task(taskId).call("stats", {}, QUICK_CALL_TIMEOUT_MS);
  }

  /** One `statsBatch` per executor for all of its tasks asked about; executors without it task by task. */
  async taskStatsBatch(taskIds: readonly string[]): Promise<Map<string, TaskResourceUsage>> {
    const byLink = new Map<ExecutorLink, ExecutorTask[]>();
    const single: ExecutorTask[] = [];
    for (const id of taskIds) {
      const task = this.tasks.get(id);
      if (!task?.link?.connected || task.exit) continue;
      if (task.handle.executor.key === undefined || task.link.protocol < 2 || !task.link.batchesStats) single.push(task);
      else {
        const tasks = byLink.get(task.link);
        if (tasks) tasks.push(task);
        else byLink.set(task.link, [task]);
      }
    }
    const samples = new Map<string, TaskResourceUsage>();
    const askOne = async (task: ExecutorTask) => samples.set(task.id, await task.call("stats", {}, QUICK_CALL_TIMEOUT_MS));
    const asked = [...byLink].map(async ([link, tasks]) => {
      const keys = tasks.map((task) => task.handle.executor.key!);
      let usage: Record<string, TaskResourceUsage>;
      try {
        usage = await link.live().call("statsBatch", { keys }, QUICK_CALL_TIMEOUT_MS);
      } catch (err) {
        if (!isUnknownMethod(err, "statsBatch")) throw err;
        // Left running by a drover from before statsBatch (same protocol): its tasks are asked one by one.
        link.batchesStats = false;
        await Promise.allSettled(tasks.map(askOne));
        return;
      }
      for (const task of tasks) {
        const sample = usage[task.handle.executor.key!];
        if (sample) samples.set(task.id, sample);
      }
    });
    // A busy or lost executor costs its tasks this sample, not the others theirs.
    await Promise.allSettled([...asked, ...single.map(askOne)]);
    return samples;
  }

  async endSharedHelpers(): Promise<void> {
    await this.reaper?.terminate();
  }

  /** Hangs up on every executor (agent shutdown); tasks and executors keep running. */
  detachAll(): void {
    for (const task of this.tasks.values()) task.close();
    this.tasks.clear();
    this.pool.closeAll();
  }
}

/**
 * The parent of `pid` once it is no longer `deadParent`: a dying executor's
 * threads end one by one, and its children pass to the reaper only when the
 * last has, a moment after its main thread shows as a zombie. Null when the
 * task ended meanwhile.
 */
async function reparented(pid: number, deadParent: number): Promise<number | null> {
  const deadline = Date.now() + REPARENT_WAIT_MS;
  for (;;) {
    const parent = parentOf(pid);
    if (parent !== deadParent || Date.now() >= deadline) return parent;
    await new Promise((resolve) => setTimeout(resolve, REPARENT_POLL_MS));
  }
}

/** Whether the kernel OOM-killed anything in the task's cgroup (false when it cannot be read). */
function oomKilledIn(paths: CgroupPaths): boolean {
  try {
    return openTaskCgroup(paths).oomKills() > 0;
  } catch {
    return false;
  }
}
