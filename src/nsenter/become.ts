/**
 * The last step of the role: become the task with execve, from the thread
 * that holds the task's namespaces, root and identity. Afterwards the process
 * has one thread (execve ends Bun's others), only fds 0-2 (everything above is
 * marked close-on-exec first), default signal dispositions, and exactly the
 * spec's environment without BUN_* variables.
 */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { cleanChildEnv } from "../runtime/env.ts";
import { chdir, cloexecFrom, errno, execve, resetSignals, strerror, takeControllingTerminal } from "../runtime/libc.ts";
import { EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, IsolationError, must } from "./errors.ts";

/** What a shell searches when the task's environment sets no PATH (Nomad's exec default). */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * Replaces this process with the task; returns only by throwing. Without
 * `cwd` the process stays where it was started.
 */
export function becomeTask(argv: readonly string[], env: Readonly<Record<string, string>>, cwd?: string): never {
  if (cwd !== undefined) must(chdir(cwd), `chdir ${cwd} as the task user`);
  const command = argv[0]!;
  const path = resolveCommand(command, env.PATH ?? DEFAULT_PATH);
  const environment = Object.entries(cleanChildEnv(env)).map(([name, value]) => `${name}=${value}`);
  resetSignals(ignoredSignals());
  must(cloexecFrom(3), "mark descriptors above 2 close-on-exec");
  execve(path, argv, environment);
  const code = errno();
  const ENOENT = 2;
  throw new IsolationError(`exec ${path}: ${strerror(code)}`, code === ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE);
}

/**
 * Makes fd 0, a terminal, this session's controlling terminal: the command
 * then gets ^C as SIGINT, window changes as SIGWINCH, and job control. The
 * process leads its own session (the executor spawns it so).
 */
export function takeTerminal(): void {
  must(takeControllingTerminal(0), "take fd 0 as the controlling terminal");
}

/** `command` as execve needs it: a name without "/" is searched in `searchPath`, inside the chroot. */
function resolveCommand(command: string, searchPath: string): string {
  if (command.includes("/")) return command;
  for (const dir of searchPath.split(":")) {
    const candidate = join(dir || ".", command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  throw new IsolationError(`${command}: not found in PATH (${searchPath})`, EXIT_NOT_FOUND);
}

/** The signals this process ignores (SigIgn in /proc/self/status): an ignored disposition survives execve. */
function ignoredSignals(): bigint {
  const match = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"));
  return match ? BigInt(`0x${match[1]}`) : 0n;
}
