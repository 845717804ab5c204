/**
 * Starting the nsenter role from the executor, in the right PID namespace.
 *
 * A PID namespace cannot be entered by a running process, only by its future
 * children. So the executor briefly points its own next child at the target
 * namespace, spawns, and points it back:
 *
 *   executor JS thread    unshare(CLONE_NEWPID)            (or setns into the task's PID ns)
 *                         spawnSelf("nsenter", ...)         child: PID 1 (or a member) there
 *                         setns(executor's own PID ns)      later children are ordinary again
 *
 * The child then execs the task, so the pid the executor holds is the task
 * itself: its exit code and signal arrive unchanged, SIGKILL to it ends the
 * whole namespace (the kernel kills every other member when PID 1 dies), and
 * a signal other than SIGKILL/SIGSTOP reaches it only if the task handles it
 * (PID 1 rules, as in Nomad's exec driver: escalate to SIGKILL after the kill
 * timeout). Bun spawns on the calling thread, so only this spawn is affected;
 * the namespace is restored before any other code runs.
 *
 * pid_mode "host" skips all of this: the role is spawned plainly, the task
 * sees the host's processes, and only its process group and cgroup bound
 * what a kill reaches.
 */
import { closeSync, openSync, readlinkSync } from "node:fs";
import type { IsolationMode } from "../lib/isolation-mode.ts";
import { liveStat } from "../stats/process.ts";
import { CLONE_NEWPID, openPseudoTerminal, readTextFile, setns, sysClose, unshare } from "../runtime/libc.ts";
import { type ChildProcess, type SpawnRequest, spawnSelf } from "../runtime/spawn.ts";
import { IsolationError, must } from "./errors.ts";

/**
 * How the executor starts the role: stdio, env, cwd, detached. No `cgroup`:
 * the spec's cgroups are joined by the role itself, because Bun's spawn tries
 * clone3(CLONE_INTO_CGROUP) first, which fails on cgroup v1 (EBADF), and a
 * failed first fork poisons a new PID namespace (every later fork: ENOMEM).
 * No uid/gid: the role needs root until it assumes the task's identity.
 */
export type RoleSpawnRequest = Omit<SpawnRequest, "argv" | "cgroup" | "uid" | "gid" | "readyPipe">;

/** The executor's own PID namespace, held open to return to after each spawn. */
let ownPidNamespace: number | undefined;

/** Points this thread's next child at a PID namespace (`enter`), runs `start`, and points it back. */
function spawnWithPidNamespace<T>(enter: () => void, start: () => T): T {
  ownPidNamespace ??= openSync("/proc/self/ns/pid", "r");
  enter();
  try {
    return start();
  } finally {
    must(setns(ownPidNamespace, CLONE_NEWPID), "return to the executor's PID namespace");
  }
}

/** Runs `start` (which spawns one process) so that its child is PID 1 of a new PID namespace. */
export function inNewPidNamespace<T>(start: () => T): T {
  return spawnWithPidNamespace(() => must(unshare(CLONE_NEWPID), "create a PID namespace"), start);
}

/**
 * Whether `pid` is still the isolated task this process started: its child,
 * not exited, and PID 1 of its own PID namespace ("private"), or, with
 * pid_mode "host", in this process's PID namespace (its NSpid has one entry:
 * the namespace /proc shows, this process's) but its own mount namespace
 * ("host"); null when it is none of these. A task that exited and was reaped
 * frees its pid; a process that took the pid is none of these, and joining
 * its namespaces could put a command on the host.
 */
function ownIsolatedTaskPidMode(pid: number): IsolationMode | null {
  try {
    if (liveStat(pid)?.parent !== process.pid) return null;
    const nsPids = /^NSpid:\s*(.*)$/m.exec(readTextFile(`/proc/${pid}/status`))?.[1]?.trim().split(/\s+/) ?? [];
    if (nsPids.length > 1) return nsPids.at(-1) === "1" ? "private" : null;
    return readlinkSync(`/proc/${pid}/ns/mnt`) !== readlinkSync("/proc/self/ns/mnt") ? "host" : null;
  } catch {
    return null;
  }
}

/** Runs `start` so that its child joins the PID namespace of `taskPid`, an isolated task this process started. */
function inTaskPidNamespace<T>(taskPid: number, start: () => T): T {
  let target: number;
  try {
    target = openSync(`/proc/${taskPid}/ns/pid`, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new IsolationError(`task ${taskPid} has exited`);
    throw new IsolationError(`open the PID namespace of task ${taskPid}: ${(err as Error).message}`);
  }
  try {
    // Checked after the open: if the task is still this one, the descriptor is its namespace.
    const pidMode = ownIsolatedTaskPidMode(taskPid);
    if (pidMode === null) throw new IsolationError(`task ${taskPid} has exited, or is not an isolated task of this process`);
    // pid_mode "host": the task is in this process's PID namespace, where a command joins it without any setns.
    if (pidMode === "host") return start();
    return spawnWithPidNamespace(() => must(setns(target, CLONE_NEWPID), `join the PID namespace of task ${taskPid}`), start);
  } finally {
    closeSync(target);
  }
}

/**
 * Starts `drover nsenter <specFile>`; the returned child becomes the isolated
 * task. Its `ready` settles when the isolation is built and the task runs
 * (or the role died): until then its namespaces are half made, and nothing
 * may join them.
 */
export function startIsolatedTask(specFile: string, req: RoleSpawnRequest, pidMode: IsolationMode = "private"): ChildProcess {
  const start = () => spawnSelf("nsenter", [specFile], { ...req, readyPipe: true });
  return pidMode === "host" ? start() : inNewPidNamespace(start);
}

/** Starts `drover nsenter --exec <taskPid> <specFile>`; the returned child becomes the command. */
export function startInTask(taskPid: number, specFile: string, req: RoleSpawnRequest): ChildProcess {
  return inTaskPidNamespace(taskPid, () => spawnSelf("nsenter", ["--exec", String(taskPid), specFile], req));
}

/**
 * A new terminal [master, slave] from the devpts instance of `taskPid`, an
 * isolated task this process started, reached through its root: a session's
 * `tty` then names a device the task itself can see. Its /dev is read-only
 * to the task, so nothing on that path can be a planted link.
 */
export function openTaskTerminal(taskPid: number): [number, number] {
  let pair: [number, number];
  try {
    pair = openPseudoTerminal(`/proc/${taskPid}/root/dev/pts/ptmx`);
  } catch (err) {
    throw new IsolationError(`open a terminal in task ${taskPid}: ${(err as Error).message}`);
  }
  // Checked after the open, as for namespaces: if the task is still this one, the terminal is its own.
  if (ownIsolatedTaskPidMode(taskPid) === null) {
    for (const fd of pair) sysClose(fd);
    throw new IsolationError(`task ${taskPid} has exited, or is not an isolated task of this process`);
  }
  return pair;
}
