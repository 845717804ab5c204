/**
 * Starting one of drover's long-lived helper roles (an executor, the host
 * reaper) the way each of them must run: its own session (it outlives its
 * parent), cwd "/", no stdin, an empty environment, the engine settings of
 * a process that mostly waits, stdout and stderr appended to its log file (a
 * pipe to the parent would kill it with SIGPIPE when the parent dies), and a
 * ready pipe it closes once it listens.
 */
import { closeSync, openSync } from "node:fs";
import { spawnSelf, type ChildProcess } from "./spawn.ts";

export function spawnDetachedRole(role: string, args: readonly string[], logPath: string, drover?: readonly string[]): ChildProcess {
  const logFd = openSync(logPath, "a", 0o600);
  try {
    const child = spawnSelf(role, args, { drover, env: {}, idle: true, cwd: "/", detached: true, stdin: "ignore", stdout: logFd, stderr: logFd, readyPipe: true });
    child.unref();
    return child;
  } finally {
    closeSync(logFd);
  }
}
