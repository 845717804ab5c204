/**
 * One task an executor supervises, from launch to destroy (an executor holds
 * one Supervisor per task, main.ts).
 *
 *   idle ──launch──> running ──main process exits──> exited ──destroy──> (executor exits)
 *                       │   (kill what is left of the tree,      ▲
 *                       │    remove the cgroup, write the exit   │
 *                       │    file, then answer every waiter)     │
 *                       └──shutdown(signal, grace)───────────────┘
 *                           signal the process group; after the grace
 *                           SIGKILL everything in the cgroup and group
 *
 * The exit result is durable before any waiter hears it, so an agent that
 * was away learns how the task ended from the exit file. Waiters share one
 * promise: none can take the result from another.
 */
import { signalNumber } from "../lib/signals.ts";
import { settlesWithin } from "../lib/timeout.ts";
import { cgroupDirs } from "../cgroups/paths.ts";
import { signalEach } from "../cgroups/signal.ts";
import { emptyCgroup, openTaskCgroup, type TaskCgroup } from "../cgroups/task-cgroup.ts";
import type { Resources } from "../cgroups/limits.ts";
import { TaskStatsSampler, type TaskResourceUsage } from "../stats/task.ts";
import { liveStat, processStartTime } from "../stats/process.ts";
import type { ChildProcess, ExitStatus } from "../runtime/spawn.ts";
import { removeFile, type ExecutorFiles, type ExitResultWriter } from "./files.ts";
import { checkLaunch, LaunchError, launchIdentity, openSessionTerminal, spawnExec, spawnTask, untilTaskRuns, type ExecStdio } from "./launch.ts";
import type { ExecSessions } from "./exec-session.ts";
import { errno, fchown, sysClose } from "../runtime/libc.ts";
import { EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND } from "../nsenter/errors.ts";
import type { Peer } from "../rpc/server.ts";
import { finishExec } from "./exec.ts";
import { openTaskOutput, type TaskOutput } from "./stdio.ts";
import { emptyTree, treeProcesses } from "./tree.ts";
import type { ExitResult } from "../structs/exit-result.ts";
import type { Reaper } from "./reaper.ts";
import type { Identity } from "./user.ts";
import { KILL_TIMEOUT_MS, type ExecExit, type ExecResult, type ExecStartResult, type LaunchRequest, type LaunchResult, type SupervisedTask } from "./protocol.ts";

interface Task {
  request: LaunchRequest;
  identity: Identity | undefined;
  child: ChildProcess;
  launched: LaunchResult;
  cgroup: TaskCgroup | null;
  outputs: TaskOutput[];
  sampler: TaskStatsSampler;
  /** Its processes when it has no cgroup: the executor's descendants, or an adopted task's own tree. */
  tree: () => number[];
  /**
   * Set the moment the main process is known reaped, before the rest of its
   * tree is killed: from then on its pid may name another process.
   */
  mainExited: boolean;
  /** Settles once the exit file is written; shared by every waiter. */
  result: Promise<ExitResult>;
  exit: ExitResult | null;
}

export type Log = (line: string) => void;

/** Interactive sessions' code, loaded by the first session: an executor that runs none never loads it. */
const sessionModule = () => import("./exec-session.ts");
/** Adopted tasks' code (adopted.ts), loaded by the first adoption. */
const adoptedModule = () => import("./adopted.ts");


export class Supervisor {
  private task: Task | null = null;
  /** A launch under way: a second one is refused, and destroy waits for it to settle. */
  private launching: Promise<LaunchResult> | null = null;
  private execCount = 0;
  /** Interactive exec sessions; made on the first one. */
  private sessions: ExecSessions | null = null;

  constructor(
    private readonly files: ExecutorFiles,
    private readonly reaper: Reaper,
    /** Shared by the executor's tasks, so that those ending together are written together. */
    private readonly exitWriter: ExitResultWriter,
    private readonly log: Log,
  ) {}

  get state(): "idle" | "running" | "exited" {
    if (!this.task) return "idle";
    return this.task.exit ? "exited" : "running";
  }

  /** The task as `version` reports it, under the key the executor knows it by. */
  describe(key: string): SupervisedTask {
    return {
      key,
      allocId: this.task?.request.allocId ?? "",
      taskName: this.task?.request.taskName ?? "",
      state: this.state,
      task: this.task?.launched ?? null,
    };
  }

  async launch(request: LaunchRequest): Promise<LaunchResult> {
    if (this.task) throw new Error(`this executor already runs ${this.task.request.allocId}/${this.task.request.taskName}`);
    if (this.launching) throw new Error("this executor is already launching a task");
    this.launching = this.start(request);
    try {
      return await this.launching;
    } finally {
      this.launching = null;
    }
  }

  private async start(request: LaunchRequest): Promise<LaunchResult> {
    const { argv, identity } = checkLaunch(request);
    const outputs: TaskOutput[] = [];
    const cgroup = request.cgroup ? openTaskCgroup(request.cgroup) : null;
    let child: ChildProcess | undefined;
    try {
      outputs.push(openTaskOutput(request.stdoutPath), openTaskOutput(request.stderrPath));
      if (cgroup) await this.prepareCgroup(cgroup, request.resources);
      child = await spawnTask(request, argv, identity, {
        cgroupDir: cgroup?.spawnDir,
        cgroupDirs: cgroup ? cgroupDirs(cgroup.paths) : [],
        stdout: outputs[0]!.taskFd,
        stderr: outputs[1]!.taskFd,
        specPath: this.files.spec,
      });
      this.reaper.track(child.pid);
      cgroup?.join(child.pid);
      await untilTaskRuns(child);
    } catch (err) {
      await this.abandonLaunch(child, cgroup, outputs);
      throw err instanceof LaunchError ? err : new LaunchError((err as Error).message);
    }
    for (const output of outputs) output.releaseTaskSide();

    const launched: LaunchResult = { pid: child.pid, startTime: processStartTime(child.pid) ?? 0, startedAt: Date.now() };
    const exited = child.exited;
    const task: Task = {
      request,
      identity,
      child,
      launched,
      cgroup,
      outputs,
      sampler: new TaskStatsSampler({ cgroup, pids: () => (cgroup ? cgroup.procs() : treeProcesses()), mhzPerCore: request.mhzPerCore }),
      tree: treeProcesses,
      mainExited: false,
      result: exited.then((status) => this.finish(task, status)),
      exit: null,
    };
    this.task = task;
    this.log(`launched ${request.allocId}/${request.taskName}: pid ${child.pid} ${argv.join(" ")}`);
    return launched;
  }

  /**
   * Takes over a task whose executor died (adopted.ts): it runs on as the
   * host reaper's child; this executor watches it by pidfd, and from here on
   * answers for it as for a task it launched (wait, signal, stats, exec,
   * shutdown, its exit file).
   */
  async adopt(request: LaunchRequest, adopted: LaunchResult, runDir: string): Promise<LaunchResult> {
    if (this.task || this.launching) throw new Error("this key already has a task in this executor");
    const { watchAdopted, adoptedTree } = await adoptedModule();
    const reaperPid = liveStat(adopted.pid)?.parent ?? 0;
    const child = watchAdopted(adopted.pid, adopted.startTime, runDir);
    const outputs: TaskOutput[] = [];
    try {
      // The task holds its own ends; the executor keeps the spare reader of each FIFO, as for its own tasks.
      outputs.push(openTaskOutput(request.stdoutPath), openTaskOutput(request.stderrPath));
    } catch (err) {
      this.log(`adopted ${request.allocId}/${request.taskName} without its outputs: ${(err as Error).message}`);
    }
    for (const output of outputs) output.releaseTaskSide();
    const cgroup = request.cgroup ? openTaskCgroup(request.cgroup) : null;
    const tree = () => adoptedTree(adopted.pid, reaperPid);
    const task: Task = {
      request,
      identity: launchIdentity(request),
      child,
      launched: adopted,
      cgroup,
      outputs,
      sampler: new TaskStatsSampler({ cgroup, pids: () => (cgroup ? cgroup.procs() : tree()), mhzPerCore: request.mhzPerCore }),
      tree,
      mainExited: false,
      result: child.exited.then((status) => this.finish(task, status)),
      exit: null,
    };
    this.task = task;
    this.log(`adopted ${request.allocId}/${request.taskName}: pid ${adopted.pid}, a child of the host reaper (pid ${reaperPid})`);
    return adopted;
  }

  /** A cgroup left by an earlier run of this task (its executor died) is emptied before reuse. */
  private async prepareCgroup(cgroup: TaskCgroup, resources: Resources): Promise<void> {
    const stale = cgroup.procs();
    if (stale.length > 0) {
      this.log(`cgroup ${cgroup.spawnDir} still held pids ${stale.join(" ")} of an earlier run; killing them`);
      await emptyCgroup(cgroup, KILL_TIMEOUT_MS);
    }
    cgroup.create(resources);
  }

  private async abandonLaunch(child: ChildProcess | undefined, cgroup: TaskCgroup | null, outputs: TaskOutput[]): Promise<void> {
    if (child) {
      child.kill("SIGKILL");
      // A process stuck in the kernel (a hung mount) outlives SIGKILL: the launch fails without waiting on it forever.
      const gone = await settlesWithin(child.exited, KILL_TIMEOUT_MS);
      if (gone) this.reaper.untrack(child.pid);
      else this.log(`pid ${child.pid} survived SIGKILL for ${KILL_TIMEOUT_MS} ms`);
    }
    for (const output of outputs) output.close();
    if (cgroup) {
      await emptyCgroup(cgroup, KILL_TIMEOUT_MS);
      try {
        cgroup.remove();
      } catch (err) {
        this.log((err as Error).message);
      }
    }
  }

  /** The main process exited: end the rest of the tree, make the result durable, then answer. */
  private async finish(task: Task, status: ExitStatus & { lost?: string }): Promise<ExitResult> {
    task.mainExited = true;
    this.reaper.untrack(task.child.pid);
    const problems: string[] = status.lost ? [status.lost] : [];
    const left = task.cgroup ? await emptyCgroup(task.cgroup, KILL_TIMEOUT_MS) : await emptyTree(task.child.pid, KILL_TIMEOUT_MS, task.tree);
    if (left.length > 0) problems.push(`pids ${left.join(" ")} survived SIGKILL for ${KILL_TIMEOUT_MS} ms`);
    const oomKilled = task.cgroup ? task.cgroup.oomKills() > 0 : false;
    if (task.cgroup && left.length === 0) {
      try {
        task.cgroup.remove();
      } catch (err) {
        problems.push((err as Error).message);
      }
    }
    const result: ExitResult = { exitCode: status.exitCode, signal: status.signal, oomKilled, finishedAt: Date.now() };
    if (problems.length > 0) result.err = problems.join("; ");
    try {
      await this.exitWriter.write(this.files.exitFile, result);
    } catch (err) {
      result.err = [result.err, `exit result not saved: ${(err as Error).message}`].filter(Boolean).join("; ");
    }
    task.exit = result;
    this.log(`task exited: code ${result.exitCode} signal ${result.signal}${oomKilled ? " (OOM killed)" : ""}${result.err ? `: ${result.err}` : ""}`);
    return result;
  }

  private running(): Task {
    if (!this.task) throw new Error("no task launched");
    return this.task;
  }

  wait(): Promise<ExitResult> {
    return this.running().result;
  }

  signal(signal: string): void {
    const task = this.running();
    if (task.mainExited) throw new Error("the task has exited");
    // Through the child's handle, which knows whether the pid is still ours.
    task.child.kill(signalNumber(signal));
  }

  async shutdown(signal: string, graceMs: number): Promise<ExitResult> {
    const task = this.running();
    if (task.exit) return task.exit;
    const number = signalNumber(signal);
    // Once the main process is reaped, finish() is already killing what is left,
    // and its pid no longer reliably names the task's group.
    if (!task.mainExited) {
      try {
        process.kill(-task.child.pid, number);
      } catch {
        // Every member of the group has exited; the result is on its way.
      }
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"grace over">((resolve) => {
      timer = setTimeout(() => resolve("grace over"), graceMs);
    });
    const first = await Promise.race([task.result, graceOver]);
    clearTimeout(timer);
    if (first === "grace over") {
      this.log(`task still running ${graceMs} ms after ${signal}; killing every process left`);
      if (task.cgroup) await emptyCgroup(task.cgroup, KILL_TIMEOUT_MS);
      else await emptyTree(task.child.pid, KILL_TIMEOUT_MS, task.tree);
    }
    return task.result;
  }

  stats(): TaskResourceUsage {
    return this.running().sampler.sample();
  }

  async exec(argv: readonly string[], timeoutMs: number): Promise<ExecResult> {
    const specPath = this.execSpecPath();
    let child: ChildProcess | undefined;
    try {
      try {
        child = await this.spawnInTask(argv, specPath);
      } catch (err) {
        // A command that is not there, or cannot run, is the caller's to fix, answered as a shell answers it.
        if (!(err instanceof LaunchError)) throw err;
        return { stdout: "", stderr: `${err.message}\n`, exitCode: err.notExecutable ? EXIT_NOT_EXECUTABLE : EXIT_NOT_FOUND };
      }
      return await finishExec(child, timeoutMs);
    } finally {
      if (child) this.reaper.untrack(child.pid);
      removeFile(specPath);
    }
  }

  /** Starts an interactive session (exec-session.ts) owned by the connection `owner`. */
  async execStart(argv: readonly string[], tty: boolean, owner: Peer): Promise<ExecStartResult> {
    const task = this.running();
    if (task.mainExited) throw new Error("the task has exited");
    const { sessionStdio, releaseCommandSide } = await sessionModule();
    const sessions = await this.execSessions();
    const stdio = await sessionStdio(tty ? () => openSessionTerminal(task.request, task.child.pid) : null);
    const specPath = this.execSpecPath();
    try {
      // A raw_exec task's user gets its terminal; an exec task's nsenter gives it.
      if (tty && task.identity && task.request.isolation === undefined) {
        if (fchown(stdio.command.stdin, task.identity.uid, task.identity.gid) < 0) throw new Error(`give the terminal to uid ${task.identity.uid}: errno ${errno()}`);
      }
      const child = await this.spawnInTask(argv, specPath, stdio.command);
      // The nsenter role reads its spec whenever it gets to it: the file goes with the session.
      void child.exited.then(() => {
        this.reaper.untrack(child.pid);
        removeFile(specPath);
      });
      return sessions.add(child, stdio.agent, owner);
    } catch (err) {
      for (const fd of stdio.agent) sysClose(fd);
      removeFile(specPath);
      throw err;
    } finally {
      releaseCommandSide(stdio.command);
    }
  }

  async execWait(session: number): Promise<ExecExit> {
    const { exitCode, signal } = await (await this.execSessions()).wait(session);
    return { exitCode, signal };
  }

  async execKill(session: number): Promise<void> {
    (await this.execSessions()).kill(session);
  }

  private execSpecPath(): string {
    return `${this.files.base}.exec-${++this.execCount}.json`;
  }

  private async execSessions(): Promise<ExecSessions> {
    if (!this.sessions) {
      const { ExecSessions } = await sessionModule();
      this.sessions ??= new ExecSessions(this.log);
    }
    return this.sessions;
  }

  /**
   * Starts `argv` in the task's context (launch.ts), tracked by the reaper and
   * in the task's cgroup. An isolated command enters the namespaces of the
   * main process by its pid, so the task must not have exited.
   */
  private async spawnInTask(argv: readonly string[], specPath: string, stdio?: ExecStdio): Promise<ChildProcess> {
    const task = this.running();
    if (task.mainExited) throw new Error("the task has exited");
    const child = await spawnExec(
      task.request,
      task.child.pid,
      argv,
      task.identity,
      { cgroupDir: task.cgroup?.spawnDir, cgroupDirs: task.cgroup ? cgroupDirs(task.cgroup.paths) : [], specPath },
      stdio,
    );
    this.reaper.track(child.pid);
    try {
      task.cgroup?.join(child.pid);
    } catch (err) {
      // Not reaped yet, so the pid still names the command's own group.
      signalEach([-child.pid], "SIGKILL");
      await child.exited;
      this.reaper.untrack(child.pid);
      throw err;
    }
    return child;
  }

  /** Kills whatever is left and closes the FIFO descriptors; the caller removes the files and exits. */
  async destroy(): Promise<void> {
    // A launch under way either fails (and cleans up after itself) or leaves a task to kill.
    await this.launching?.catch(() => undefined);
    const task = this.task;
    if (!task) return;
    if (!task.exit) await this.shutdown("SIGKILL", 0);
    for (const output of task.outputs) output.close();
  }

  /** Bytes the log pump has not read yet from the task's FIFOs. */
  unreadLogBytes(): number {
    return this.task?.outputs.reduce((sum, output) => sum + output.unreadBytes(), 0) ?? 0;
  }
}
