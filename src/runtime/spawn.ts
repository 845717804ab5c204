/**
 * Starting child processes. Every child drover starts goes through here, so
 * the environment is always cleaned (no `BUN_*`, no role handshake).
 */
import { cleanChildEnv } from "./env.ts";
import { roleHandshakeEnv, selfArgv } from "./self.ts";
import { signalNumber } from "../lib/signals.ts";

/** What a standard stream of the child is connected to. */
export type Stdio = "ignore" | "inherit" | "pipe" | number;

export interface SpawnRequest {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  stdin?: Exclude<Stdio, "pipe">;
  stdout?: Stdio;
  stderr?: Stdio;
  /** Own session and process group (setsid): survives its parent and its terminal. */
  detached?: boolean;
  /** A cgroup directory the child joins before its first instruction (Linux). */
  cgroup?: string;
  uid?: number;
  gid?: number;
}

/** How a process ended: an exit code, or the signal that killed it. */
export interface ExitStatus {
  exitCode: number;
  /** Signal number, 0 when the process exited on its own. */
  signal: number;
}

export interface ChildProcess {
  readonly pid: number;
  readonly exited: Promise<ExitStatus>;
  readonly stdout: ReadableStream<Uint8Array> | null;
  readonly stderr: ReadableStream<Uint8Array> | null;
  kill(signal?: NodeJS.Signals | number): void;
  /** Let this process exit without waiting for the child. */
  unref(): void;
}

export function spawnProcess(req: SpawnRequest): ChildProcess {
  return launch(req, cleanChildEnv(req.env));
}

/** Starts `req.argv` with exactly `env` (already cleaned by the caller). */
function launch(req: SpawnRequest, env: Record<string, string>): ChildProcess {
  const proc = Bun.spawn({
    cmd: [...req.argv],
    env,
    cwd: req.cwd,
    stdio: [req.stdin ?? "ignore", req.stdout ?? "ignore", req.stderr ?? "ignore"],
    detached: req.detached ?? false,
    cgroup: req.cgroup,
    uid: req.uid,
    gid: req.gid,
  });
  const exited = proc.exited.then(
    (code): ExitStatus => ({
      exitCode: proc.signalCode ? 128 + signalNumber(proc.signalCode) : code,
      signal: proc.signalCode ? signalNumber(proc.signalCode) : 0,
    }),
  );
  return {
    pid: proc.pid,
    exited,
    stdout: proc.stdout instanceof ReadableStream ? proc.stdout : null,
    stderr: proc.stderr instanceof ReadableStream ? proc.stderr : null,
    kill: (signal) => proc.kill(signal),
    unref: () => proc.unref(),
  };
}

/**
 * Starts this program as `role` with the handshake that internal roles
 * require. `program` names another drover binary to run instead (benchmarks
 * run the compiled binary's roles from a script).
 */
export function spawnSelf(
  role: string,
  args: readonly string[],
  req: Omit<SpawnRequest, "argv"> & { program?: string },
): ChildProcess {
  const argv = req.program ? [req.program, role, ...args] : selfArgv([role, ...args]);
  // The handshake goes in after cleaning, which removes any inherited one.
  return launch({ ...req, argv }, { ...cleanChildEnv(req.env), ...roleHandshakeEnv() });
}
