/**
 * Starting child processes. Every child drover starts goes through here, so
 * the environment is always cleaned (no runtime variables, no role
 * handshake). The runtime's half (bun/spawn.ts, deno/spawn.ts) starts the
 * process; what the options mean is the same on both.
 */
import { describeTail, OUTPUT_TAIL_BYTES } from "../lib/output-tail.ts";
import { cleanChildEnv } from "./env.ts";
import { O_CLOEXEC_FLAG, pipe2, sysClose } from "./libc.ts";
import { IDLE_ROLE_ENGINE_ENV, readyFdEnv, roleHandshakeEnv, selfArgv } from "./self.ts";
import { launch, untilClosed } from "@drover/runtime/spawn.ts";

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
  /**
   * Give the child, as fd 3, the write end of a pipe this process watches;
   * `ready` settles once every copy is closed. A role closes it when it is
   * ready to be talked to (the executor, once it listens), or marks it
   * close-on-exec so that its execve closes it (the nsenter role, becoming the
   * task); dying closes it too. No polling, and no signal is lost.
   */
  readyPipe?: boolean;
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
  /** With `readyPipe`: settles when the child has closed its fd 3, or died. */
  readonly ready?: Promise<void>;
  kill(signal?: NodeJS.Signals | number): void;
  /** Let this process exit without waiting for the child. */
  unref(): void;
}

/**
 * What a runtime's half starts: the request with its environment already
 * cleaned, and the child's descriptors from 0 up (`extraFds` from 3 on).
 */
export interface LaunchRequest {
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string | undefined;
  stdio: readonly [Exclude<Stdio, "pipe">, Stdio, Stdio];
  extraFds: readonly number[];
  detached: boolean;
  cgroup: string | undefined;
  uid: number | undefined;
  gid: number | undefined;
}

/** Starts a process; throws when it cannot be started. */
export type Launch = (req: LaunchRequest) => Omit<ChildProcess, "ready">;

/** Resolves once every writer of the pipe `fd` (a read end) has closed it; then closes `fd`. */
export type UntilClosed = (fd: number) => Promise<void>;

export function spawnProcess(req: SpawnRequest): ChildProcess {
  return start(req, cleanChildEnv(req.env));
}

/** Starts `req.argv` with exactly `env` (already cleaned by the caller). */
function start(req: SpawnRequest, env: Record<string, string>): ChildProcess {
  const readyPipe = req.readyPipe ? pipe2(O_CLOEXEC_FLAG) : null;
  let child: Omit<ChildProcess, "ready">;
  try {
    child = launch({
      argv: req.argv,
      env,
      cwd: req.cwd,
      stdio: [req.stdin ?? "ignore", req.stdout ?? "ignore", req.stderr ?? "ignore"],
      extraFds: readyPipe ? [readyPipe[1]] : [],
      detached: req.detached ?? false,
      cgroup: req.cgroup,
      uid: req.uid,
      gid: req.gid,
    });
  } catch (err) {
    if (readyPipe) for (const fd of readyPipe) sysClose(fd);
    throw err;
  }
  // Only the child may hold the write end, or the pipe never reaches end of file.
  if (readyPipe) sysClose(readyPipe[1]);
  return readyPipe ? { ...child, ready: untilClosed(readyPipe[0]) } : child;
}

export { IDLE_ROLE_ENGINE_ENV };

/** Where host tools (ip, iptables, mkfs.ext4, mount, CNI plugins) are looked for: the agent's own PATH may lack the sbin directories. */
export const TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** What a child run to its end wrote, and how it ended. */
export interface Collected {
  status: ExitStatus;
  stdout: string;
  /** Only ever quoted in an error: its last OUTPUT_TAIL_BYTES, saying what was cut (output-tail.ts). */
  stderr: string;
}

/** Runs a child to its end with its stdout and stderr piped. */
export async function runCollected(req: Omit<SpawnRequest, "stdout" | "stderr">): Promise<Collected> {
  const child = spawnProcess({ ...req, stdout: "pipe", stderr: "pipe" });
  const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), streamTail(child.stderr!)]);
  return { status, stdout, stderr };
}

/** The end of a stream (describeTail), holding no more than OUTPUT_TAIL_BYTES and a chunk meanwhile, however much comes. */
async function streamTail(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let held = 0;
  let cut = 0;
  for await (const chunk of stream) {
    chunks.push(chunk);
    held += chunk.length;
    while (held - chunks[0]!.length >= OUTPUT_TAIL_BYTES) {
      const dropped = chunks.shift()!;
      held -= dropped.length;
      cut += dropped.length;
    }
  }
  const kept = Buffer.concat(chunks);
  const excess = Math.max(0, kept.length - OUTPUT_TAIL_BYTES);
  return describeTail(kept.subarray(excess), cut + excess);
}

/** Runs a host tool found on TOOL_PATH; its stdout, or an error naming the command with its stderr. */
export async function runTool(argv: readonly string[]): Promise<string> {
  const { status, stdout, stderr } = await runCollected({ argv, env: { PATH: TOOL_PATH }, stdin: "ignore" });
  if (status.exitCode !== 0 || status.signal !== 0) throw new Error(`${argv.join(" ")}: ${stderr.trim() || `exit ${status.exitCode}`}`);
  return stdout;
}

/**
 * Starts this program as `role` with the handshake that internal roles
 * require. `drover` names the command of another drover to run instead (a
 * binary, or a runtime and src/main.ts: benchmarks run the compiled binary's
 * roles, and Deno's, from a script); `idle` gives the role the engine
 * settings of a process that mostly waits.
 */
export function spawnSelf(
  role: string,
  args: readonly string[],
  req: Omit<SpawnRequest, "argv"> & { drover?: readonly string[]; idle?: boolean },
): ChildProcess {
  const argv = req.drover ? [...req.drover, role, ...args] : selfArgv([role, ...args]);
  // The handshake and engine settings go in after cleaning, which removes any inherited ones.
  const env = { ...cleanChildEnv(req.env), ...(req.idle ? IDLE_ROLE_ENGINE_ENV : {}), ...roleHandshakeEnv(), ...(req.readyPipe ? readyFdEnv() : {}) };
  return start({ ...req, argv }, env);
}
