/**
 * The launch seam: turns a launch request (or an exec into the running task)
 * into a spawn — argv, env, cwd, stdio, cgroup, uid. Everything else the
 * executor does (waiting, reaping, shutdown, stats, the exit file) does not
 * care which branch ran:
 *
 *   request.isolation absent   raw_exec: the task's own argv, env, cwd and user
 *   request.isolation present  exec:     the spec is written to a file and the
 *                                        task starts as `drover nsenter <spec>`,
 *                                        which builds the isolation and becomes it
 *
 * Problems a user can fix (missing command, bad cwd, unknown user) are found
 * here, before anything starts, with the path or name in the message.
 */
import { readlinkSync } from "node:fs";
import { UTIL_LINUX_NSENTER } from "../lib/bridge-network.ts";
import { writeFileReplacing } from "../runtime/fs.ts";
import { withTimeout } from "../lib/timeout.ts";
import { openPseudoTerminal, sysAccess, sysStat, X_OK, type FileStat } from "../runtime/libc.ts";
import { spawnProcess, spawnSelf, type ChildProcess, type SpawnRequest } from "../runtime/spawn.ts";
import type { LaunchRequest } from "./protocol.ts";
import { lookupUser, type Identity } from "./user.ts";

/** A launch the user must fix; the message names the bad field, path or name. */
export class LaunchError extends Error {
  override name = "LaunchError";
  constructor(
    message: string,
    /** The command is there but cannot be executed (not a file, no execute permission), as against missing. */
    readonly notExecutable = false,
  ) {
    super(message);
  }
}

/** PATH for a task whose environment sets none (the usual system directories). */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Where the spawned process goes and what its fds 1 and 2 are. */
export interface Placement {
  /** The cgroup directory the process joins before its first instruction, if any. */
  cgroupDir?: string;
  /**
   * Every directory of the task's cgroup. An isolated task joins them itself,
   * first thing in the nsenter role: spawn's cgroup option cannot be used for
   * it (a failed clone3 into a v1 cgroup poisons a fresh PID namespace).
   */
  cgroupDirs: readonly string[];
  stdout: SpawnRequest["stdout"];
  stderr: SpawnRequest["stderr"];
  /** Where an isolation spec is written for the nsenter role. */
  specPath: string;
}

/** Checks what can be checked before a spawn; throws LaunchError naming the problem. */
export function checkLaunch(request: LaunchRequest): { argv: string[]; identity: Identity | undefined } {
  let cwd: FileStat;
  try {
    cwd = sysStat(request.cwd);
  } catch (err) {
    throw new LaunchError(`cwd ${request.cwd}: ${(err as { code?: string }).code === "ENOENT" ? "no such directory" : (err as Error).message}`);
  }
  if (cwd.kind !== "directory") throw new LaunchError(`cwd ${request.cwd}: not a directory`);
  const identity = launchIdentity(request);
  // An isolated task's command lives inside its chroot; nsenter resolves it there.
  const argv = request.isolation === undefined ? [resolveCommand(request.argv[0]!, request.env.PATH, request.cwd), ...request.argv.slice(1)] : request.argv;
  return { argv, identity };
}

/** The user the task runs as, looked up on the host; undefined: the executor's own. */
export function launchIdentity(request: LaunchRequest): Identity | undefined {
  return request.user ? userIdentity(request.user) : undefined;
}

function userIdentity(user: string): Identity {
  if (process.getuid?.() !== 0) throw new LaunchError(`user "${user}": running a task as another user needs the executor to run as root`);
  try {
    return lookupUser(user);
  } catch (err) {
    throw new LaunchError((err as Error).message);
  }
}

/** The command's path: as given when it holds a "/" (relative to cwd), else the first match on PATH. */
export function resolveCommand(command: string, path: string | undefined, cwd: string): string {
  const under = (dir: string, name: string) => (name.startsWith("/") ? name : `${dir}/${name}`);
  if (command.includes("/")) {
    const full = under(cwd, command);
    checkExecutable(full, command);
    return full;
  }
  const dirs = (path ?? DEFAULT_PATH).split(":").filter(Boolean);
  for (const dir of dirs) {
    const candidate = `${under(cwd, dir)}/${command}`;
    if (kindOf(candidate) === "file" && sysAccess(candidate, X_OK)) return candidate;
  }
  throw new LaunchError(`command "${command}": not found in PATH (${dirs.join(":")})`);
}

function kindOf(path: string): FileStat["kind"] | null {
  try {
    return sysStat(path).kind;
  } catch {
    return null;
  }
}

function checkExecutable(full: string, command: string): void {
  const kind = kindOf(full);
  if (kind === null) throw new LaunchError(`command "${command}": ${full} does not exist`);
  if (kind !== "file") throw new LaunchError(`command "${command}": ${full} is not a file`, true);
  if (!sysAccess(full, X_OK)) throw new LaunchError(`command "${command}": ${full} is not executable`, true);
}

/**
 * The isolated launcher, loaded only by executors of isolated tasks: a
 * raw_exec executor never pays for it.
 */
const isolatedLauncher = () => import("../nsenter/launch.ts");

function isolationSpec(isolation: unknown, cgroupDirs: readonly string[]): Record<string, unknown> {
  if (typeof isolation !== "object" || isolation === null) throw new LaunchError("isolation: expected an object");
  return { ...isolation, cgroups: [...cgroupDirs] };
}

/**
 * How long the nsenter role may take from its spawn to the task's execve.
 * Its work is a few mounts and system calls (tens of ms); a role stuck far
 * longer (a hung mount source) is killed and the launch fails, instead of
 * leaving the agent waiting forever.
 */
export const ISOLATION_SETUP_TIMEOUT_MS = 30_000;

/**
 * Settles once `child` runs the task's own program: at once for raw_exec;
 * for exec, after the nsenter role built the isolation and execed (or died).
 * Before that its namespaces are half made: an exec joining them could land
 * on the host's hostname or mounts.
 */
export async function untilTaskRuns(child: ChildProcess): Promise<void> {
  if (!child.ready) return;
  await withTimeout(child.ready, ISOLATION_SETUP_TIMEOUT_MS, () => new LaunchError(`isolation setup did not finish within ${ISOLATION_SETUP_TIMEOUT_MS} ms`));
}

/** Starts the task: its own session and process group, so a shutdown can signal the whole group. */
export async function spawnTask(request: LaunchRequest, argv: readonly string[], identity: Identity | undefined, placement: Placement): Promise<ChildProcess> {
  const stdio = { stdin: "ignore", stdout: placement.stdout, stderr: placement.stderr, detached: true } as const;
  try {
    if (request.isolation !== undefined) {
      const spec = isolationSpec(request.isolation, placement.cgroupDirs);
      writeFileReplacing(placement.specPath, JSON.stringify(spec), 0o600);
      const { startIsolatedTask } = await isolatedLauncher();
      // nsenter checks the whole spec; anything but "host" is a task of its own PID namespace.
      return startIsolatedTask(placement.specPath, { ...stdio, env: {}, cwd: "/" }, spec.pidMode === "host" ? "host" : "private");
    }
    return spawnProcess({ ...stdio, cgroup: placement.cgroupDir, argv, env: request.env, cwd: request.cwd, uid: identity?.uid, gid: identity?.gid });
  } catch (err) {
    if (err instanceof LaunchError) throw err;
    throw new LaunchError(`start ${argv[0]}: ${(err as Error).message}`);
  }
}

/**
 * What an exec command's fds 0-2 are: "ignore"/"pipe" for a command whose
 * output the executor collects, or descriptors made for an interactive
 * session. With `terminal` the three are one terminal, which the command
 * takes as its controlling terminal (job control, ^C, window size changes).
 */
export interface ExecStdio {
  stdin: "ignore" | number;
  stdout: "pipe" | number;
  stderr: "pipe" | number;
  terminal: boolean;
}

const COLLECTED_OUTPUT: ExecStdio = { stdin: "ignore", stdout: "pipe", stderr: "pipe", terminal: false };

/**
 * Starts a command in the running task's context: same env, cwd, user and
 * cgroup. It leads its own session and process group, so a kill reaches
 * everything it started there.
 *
 *   exec task:      drover nsenter --exec <task pid> <spec>   joins the task's namespaces
 *   raw_exec task:  the command itself, or with a terminal
 *                   drover nsenter --session <command>        takes the terminal, then execs
 *
 * A process can only take a controlling terminal itself, after setsid and
 * before execve, so a raw_exec terminal session needs the small role in
 * between; everything else starts the command directly.
 */
export async function spawnExec(
  request: LaunchRequest,
  taskPid: number,
  argv: readonly string[],
  identity: Identity | undefined,
  placement: Omit<Placement, "stdout" | "stderr">,
  stdio: ExecStdio = COLLECTED_OUTPUT,
): Promise<ChildProcess> {
  const { terminal, ...streams } = stdio;
  const spawnStdio = { ...streams, detached: true } as const;
  try {
    if (request.isolation !== undefined) {
      // The command gets the task's identity, rlimits, syscall filter and working dir (an image's); nsenter checks the copied fields.
      const { user, capabilities, rlimits, allowSyscalls, syscallFilter, cwd } = isolationSpec(request.isolation, []);
      const inherited = Object.fromEntries(Object.entries({ user, capabilities, rlimits, allowSyscalls, syscallFilter, cwd }).filter(([, value]) => value !== undefined));
      const spec = { argv, env: request.env, cgroups: [...placement.cgroupDirs], ...inherited, ...(terminal ? { tty: true } : {}) };
      writeFileReplacing(placement.specPath, JSON.stringify(spec), 0o600);
      const { startInTask } = await isolatedLauncher();
      return startInTask(taskPid, placement.specPath, { ...spawnStdio, env: {}, cwd: "/" });
    }
    const resolved = inTaskNetwork(taskPid, [resolveCommand(argv[0]!, request.env.PATH, request.cwd), ...argv.slice(1)]);
    const context = { ...spawnStdio, cgroup: placement.cgroupDir, env: request.env, cwd: request.cwd, uid: identity?.uid, gid: identity?.gid };
    if (terminal) return spawnSelf("nsenter", ["--session", ...resolved], context);
    return spawnProcess({ ...context, argv: resolved });
  } catch (err) {
    if (err instanceof LaunchError) throw err;
    throw new LaunchError(`start ${argv[0]}: ${(err as Error).message}`);
  }
}

/**
 * A raw_exec task in its alloc's bridge namespace (it started through
 * util-linux nsenter, drivers/network.ts): its commands join it too, as
 * Nomad's executor runs them in the task's network.
 */
function inTaskNetwork(taskPid: number, argv: string[]): string[] {
  let taskNet: string;
  try {
    taskNet = readlinkSync(`/proc/${taskPid}/ns/net`);
  } catch {
    return argv;
  }
  if (taskNet === readlinkSync("/proc/self/ns/net")) return argv;
  return [UTIL_LINUX_NSENTER, `--net=/proc/${taskPid}/ns/net`, "--", ...argv];
}

/**
 * A new terminal for a session in the task: in an exec task, from the
 * task's own devpts (so `tty` names it inside the chroot); in a raw_exec
 * task, from the host's.
 */
export async function openSessionTerminal(request: LaunchRequest, taskPid: number): Promise<[number, number]> {
  if (request.isolation === undefined) return openPseudoTerminal();
  const { openTaskTerminal } = await isolatedLauncher();
  return openTaskTerminal(taskPid);
}
