/**
 * The agent's side of an executor: starting one, and connecting to one that
 * may have outlived an earlier agent.
 *
 *   startExecutor: spawnDetachedRole("executor", [base]) in its own session, stdout and
 *     stderr appended to <base>.log (a pipe to the agent would kill it with
 *     SIGPIPE when the agent dies), cwd "/", outside the task's cgroup; then
 *     connect once it closes its ready pipe (it listens by then), without
 *     polling the socket.
 *   connectExecutor: connect to a socket from a handle; a peer that does not
 *     answer `version` as the expected process is not the executor.
 *   startExecSession: an interactive exec session whose stdio this process
 *     takes over from the executor (exec-session.ts has the executor's side).
 */
import { chmodSync, mkdirSync, readFileSync } from "node:fs";
import { settlesWithin } from "../lib/timeout.ts";
import { isUnknownMethod, RpcClient } from "../rpc/client.ts";
import { spawnDetachedRole } from "../runtime/detached-role.ts";
import type { ChildProcess } from "../runtime/spawn.ts";
import { isAlive, processStartTime } from "../stats/process.ts";
import type { HostReaperLink } from "./reaper-client.ts";
import type { ExecutorFiles } from "./files.ts";
import { newExecutorFiles } from "./naming.ts";
import { ExecutorProtocol, SUPPORTED_EXECUTOR_PROTOCOLS, type ExecExit, type VersionResult } from "./protocol.ts";
import { sysClose, takeDescriptor } from "../runtime/libc.ts";

export type ExecutorConnection = RpcClient<typeof ExecutorProtocol>;

/** A compiled executor answers in ~10 ms and `bun src/main.ts` in ~100 ms; a loaded host gets ample room. */
export const EXECUTOR_START_TIMEOUT_MS = 10_000;
/** How long an executor that closed its ready pipe by dying may take to be reaped, for the error message. */
const EXIT_REPORT_MS = 1_000;
/** How much of a failed executor's log goes into the error. */
const LOG_TAIL_BYTES = 2_000;

export interface StartExecutorOptions {
  runDir: string;
  /** Its files' base name in the run directory; a fresh `ex-<rand>` when absent. */
  name?: string;
  /** The command that runs drover (a binary, or a runtime and src/main.ts), for the executor; this program when absent. */
  drover?: readonly string[];
}

export interface StartedExecutor {
  pid: number;
  /** The executor's start time (/proc/PID/stat): with the pid, names this process for good. */
  startTime: number;
  files: ExecutorFiles;
  connection: ExecutorConnection;
}

/** The run directory, made when missing; made earlier with another mode (or by another umask), it is closed to all but its owner now. */
export function ensureRunDir(runDir: string): void {
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  chmodSync(runDir, 0o700);
}

/** The run directory and the new executor's files in it. */
function prepareFiles(options: StartExecutorOptions): ExecutorFiles {
  ensureRunDir(options.runDir);
  return newExecutorFiles(options.runDir, options.name);
}

/**
 * Starts an executor as the host reaper's child (reaper-client.ts), so that
 * its tasks are reparented to the reaper, not to init, if it dies. Throws
 * ReaperUnavailableError when no reaper can be reached or started.
 */
export async function startExecutorUnder(reaper: HostReaperLink, options: StartExecutorOptions): Promise<StartedExecutor> {
  const files = prepareFiles(options);
  const { pid, startTime } = await reaper.spawnExecutor(files.base);
  try {
    return { pid, startTime, files, connection: await RpcClient.connect(files.socket, ExecutorProtocol) };
  } catch (err) {
    if (isAlive(pid, startTime)) process.kill(pid, "SIGKILL");
    throw new Error(`executor (pid ${pid}) does not answer on ${files.socket} (${(err as Error).message}): ${logTail(files.log)}`);
  }
}

export async function startExecutor(options: StartExecutorOptions): Promise<StartedExecutor> {
  const files = prepareFiles(options);
  const child = spawnDetachedRole("executor", [files.base], files.log, options.drover);
  const startTime = processStartTime(child.pid) ?? 0;
  const connection = await awaitSocket(files, child);
  return { pid: child.pid, startTime, files, connection };
}

/**
 * Connects once the executor closed its ready pipe. An executor that never
 * closes it (a binary from before the pipe) is tried once at the deadline
 * instead of being given up unasked. Any failure kills the executor: nothing
 * half-started is left to linger.
 */
async function awaitSocket(files: ExecutorFiles, child: ChildProcess): Promise<ExecutorConnection> {
  const readyInTime = child.ready ? await settlesWithin(child.ready, EXECUTOR_START_TIMEOUT_MS) : true;
  try {
    return await RpcClient.connect(files.socket, ExecutorProtocol);
  } catch (err) {
    // A ready pipe closed by dying: give the exit a moment to be reaped, to say so.
    const died = readyInTime && (await settlesWithin(child.exited, EXIT_REPORT_MS));
    child.kill("SIGKILL");
    const what = died
      ? "exited before it listened"
      : readyInTime
        ? `does not answer on ${files.socket} (${(err as Error).message})`
        : `did not listen on ${files.socket} within ${EXECUTOR_START_TIMEOUT_MS} ms`;
    throw new Error(`executor (pid ${child.pid}) ${what}: ${logTail(files.log)}`);
  }
}

function logTail(path: string): string {
  try {
    const text = readFileSync(path, "utf8").trim();
    return text.length > LOG_TAIL_BYTES ? `...${text.slice(-LOG_TAIL_BYTES)}` : text || "(its log is empty)";
  } catch {
    return "(no log)";
  }
}

/** Raised when the socket answers but not as the executor the caller expected. */
export class ExecutorMismatchError extends Error {
  override name = "ExecutorMismatchError";
}

/**
 * Connects to an executor and checks who answers: the protocol must match and,
 * when `expectedPid` is given, so must the pid. Throws RpcConnectionError when
 * nothing answers.
 */
export async function connectExecutor(socket: string, expectedPid?: number): Promise<{ connection: ExecutorConnection; version: VersionResult }> {
  const connection = await RpcClient.connect(socket, ExecutorProtocol);
  try {
    const version = await connection.call("version", {}, EXECUTOR_START_TIMEOUT_MS);
    if (!SUPPORTED_EXECUTOR_PROTOCOLS.includes(version.protocol)) {
      throw new ExecutorMismatchError(`executor at ${socket} speaks protocol ${version.protocol}, this agent ${SUPPORTED_EXECUTOR_PROTOCOLS.join(" or ")}`);
    }
    if (expectedPid !== undefined && version.pid !== expectedPid) {
      throw new ExecutorMismatchError(`executor at ${socket} is pid ${version.pid}, not the expected ${expectedPid}`);
    }
    return { connection, version };
  } catch (err) {
    connection.close();
    throw err;
  }
}

/** A session's stdio on the agent's side: one terminal, or three pipes. */
export type SessionStreams = { terminal: number } | { stdin: number; stdout: number; stderr: number };

export interface ExecSession {
  /** The command's pid (on the host). */
  pid: number;
  /** This process's ends, close-on-exec; the caller closes them. */
  streams: SessionStreams;
  /** How the command ended; rejects when the executor goes away first. */
  exited: Promise<ExecExit>;
  /** Kills the command and its process group; a session already over is fine. */
  kill(): Promise<void>;
}

/** How long starting a session may take: a spawn, and an nsenter for an exec task. */
const EXEC_START_TIMEOUT_MS = 30_000;
/** How long a kill may take to be acknowledged (it is a signal and a few closes). */
const EXEC_KILL_TIMEOUT_MS = 5_000;

/**
 * Starts `argv` as an interactive session in the executor's task and takes
 * over its stdio: this process copies the executor's ends (pidfd_getfd), and
 * the executor then drops its own, so the bytes move between the command
 * and this process alone.
 */
export async function startExecSession(
  connection: ExecutorConnection,
  executorPid: number,
  /** The task's key in its executor; none for a protocol-1 executor's one task. */
  key: string | undefined,
  argv: readonly string[],
  tty: boolean,
): Promise<ExecSession> {
  const onTask = key === undefined ? {} : { key };
  const started = await connection.call("execStart", { ...onTask, argv: [...argv], tty }, EXEC_START_TIMEOUT_MS).catch((err: Error) => {
    // An executor left running by an older drover answers everything but this.
    if (isUnknownMethod(err, "execStart")) {
      throw new Error("this task's executor predates interactive exec; restart the task to use it");
    }
    throw err;
  });
  const kill = async () => {
    if (!connection.isClosed) await connection.call("execKill", { ...onTask, session: started.session }, EXEC_KILL_TIMEOUT_MS);
  };
  const taken: number[] = [];
  try {
    for (const fd of started.fds) taken.push(takeDescriptor(executorPid, fd));
  } catch (err) {
    for (const fd of taken) sysClose(fd);
    await kill().catch(() => undefined);
    throw new Error(`take over the session's stdio from executor ${executorPid}: ${(err as Error).message}`);
  }
  const streams: SessionStreams = tty ? { terminal: taken[0]! } : { stdin: taken[0]!, stdout: taken[1]!, stderr: taken[2]! };
  return { pid: started.pid, streams, exited: connection.call("execWait", { ...onTask, session: started.session }), kill };
}
