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
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { writeFileAtomic } from "../lib/fs.ts";
import { spawnProcess, spawnSelf, type ChildProcess, type SpawnRequest } from "../runtime/spawn.ts";
import type { LaunchRequest } from "./protocol.ts";
import { lookupUser, type Identity } from "./user.ts";

/** A launch the user must fix; the message names the bad field, path or name. */
export class LaunchError extends Error {
  override name = "LaunchError";
}

/** PATH for a task whose environment sets none (the usual system directories). */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Where the spawned process goes and what its fds 1 and 2 are. */
export interface Placement {
  /** The cgroup directory the process joins before its first instruction, if any. */
  cgroupDir?: string;
  stdout: SpawnRequest["stdout"];
  stderr: SpawnRequest["stderr"];
  /** Where an isolation spec is written for the nsenter role. */
  specPath: string;
}

/** Checks what can be checked before a spawn; throws LaunchError naming the problem. */
export function checkLaunch(request: LaunchRequest): { argv: string[]; identity: Identity | undefined } {
  let cwd;
  try {
    cwd = statSync(request.cwd);
  } catch (err) {
    throw new LaunchError(`cwd ${request.cwd}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such directory" : (err as Error).message}`);
  }
  if (!cwd.isDirectory()) throw new LaunchError(`cwd ${request.cwd}: not a directory`);
  const identity = request.user ? userIdentity(request.user) : undefined;
  // An isolated task's command lives inside its chroot; nsenter resolves it there.
  const argv = request.isolation === undefined ? [resolveCommand(request.argv[0]!, request.env.PATH, request.cwd), ...request.argv.slice(1)] : request.argv;
  return { argv, identity };
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
  if (command.includes("/")) {
    const full = isAbsolute(command) ? command : resolve(cwd, command);
    checkExecutable(full, command);
    return full;
  }
  const dirs = (path ?? DEFAULT_PATH).split(delimiter).filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(isAbsolute(dir) ? dir : resolve(cwd, dir), command);
    try {
      if (statSync(candidate).isFile()) {
        accessSync(candidate, constants.X_OK);
        return candidate;
      }
    } catch {
      // Not here; try the next directory.
    }
  }
  throw new LaunchError(`command "${command}": not found in PATH (${dirs.join(delimiter)})`);
}

function checkExecutable(full: string, command: string): void {
  let stat;
  try {
    stat = statSync(full);
  } catch {
    throw new LaunchError(`command "${command}": ${full} does not exist`);
  }
  if (!stat.isFile()) throw new LaunchError(`command "${command}": ${full} is not a file`);
  try {
    accessSync(full, constants.X_OK);
  } catch {
    throw new LaunchError(`command "${command}": ${full} is not executable`);
  }
}

/** Starts the task: its own session and process group, so a shutdown can signal the whole group. */
export function spawnTask(request: LaunchRequest, argv: readonly string[], identity: Identity | undefined, placement: Placement): ChildProcess {
  const common = { stdin: "ignore", stdout: placement.stdout, stderr: placement.stderr, detached: true, cgroup: placement.cgroupDir } as const;
  try {
    if (request.isolation !== undefined) {
      writeFileAtomic(placement.specPath, JSON.stringify(request.isolation), 0o600);
      return spawnSelf("nsenter", [placement.specPath], { ...common, env: {}, cwd: "/" });
    }
    return spawnProcess({ ...common, argv, env: request.env, cwd: request.cwd, uid: identity?.uid, gid: identity?.gid });
  } catch (err) {
    throw new LaunchError(`start ${argv[0]}: ${(err as Error).message}`);
  }
}

/** Starts a command in the running task's context: same env, cwd, user and cgroup; output to pipes. */
export function spawnExec(
  request: LaunchRequest,
  taskPid: number,
  argv: readonly string[],
  identity: Identity | undefined,
  placement: Omit<Placement, "stdout" | "stderr">,
): ChildProcess {
  const common = { stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true, cgroup: placement.cgroupDir } as const;
  try {
    if (request.isolation !== undefined) {
      writeFileAtomic(placement.specPath, JSON.stringify({ argv, env: request.env }), 0o600);
      return spawnSelf("nsenter", ["--exec", String(taskPid), placement.specPath], { ...common, env: {}, cwd: "/" });
    }
    const resolved = [resolveCommand(argv[0]!, request.env.PATH, request.cwd), ...argv.slice(1)];
    return spawnProcess({ ...common, argv: resolved, env: request.env, cwd: request.cwd, uid: identity?.uid, gid: identity?.gid });
  } catch (err) {
    if (err instanceof LaunchError) throw err;
    throw new LaunchError(`start ${argv[0]}: ${(err as Error).message}`);
  }
}
