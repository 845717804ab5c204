/**
 * The FIFOs between a task and the logmon. The task runner's logmon hook
 * creates them before the task starts; the task's executor opens the write
 * side (plus a spare read-write descriptor that keeps the pipe alive while the
 * logmon restarts); the logmon opens the read side. Beside each, a staging
 * FIFO the logmon moves bytes through on their way to the file; the executor
 * holds a spare end of it too, so bytes between the two moves outlive a
 * logmon killed there (logmon/log-stream.ts).
 *
 * A task can write into its alloc dir, so a path here may have been replaced
 * by a symlink to somewhere else: every open is O_NOFOLLOW and checks that it
 * got a FIFO, and creation never follows an existing entry.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { errno, F_GETPIPE_SZ, F_SETPIPE_SZ, fcntl, mkfifo, O_CLOEXEC_FLAG } from "../runtime/libc.ts";
import { fifoPath, isSafeTaskName, LOG_TYPES, type LogType, stageFifoPath } from "./layout.ts";

/** Only the agent (and the logmon and executor it starts, as the same user) may open a task's log pipe. */
const FIFO_MODE = 0o600;

/**
 * Pipe buffer the log path asks for: 1 MiB (the default pipe-max-size) lets a
 * task write for a while without blocking when the logmon is busy or
 * restarting, and lets the logmon move large batches per call.
 */
export const LOG_PIPE_SIZE = 1 << 20;

export class FifoError extends Error {
  override name = "FifoError";
}

/** "EAGAIN" for 11: the name of an errno value, for messages. */
export function errnoName(code: number): string {
  for (const [name, value] of Object.entries(osConstants.errno)) if (value === code) return name;
  return `errno ${code}`;
}

export type TaskFifos = Record<LogType, string>;

/** Creates (or reuses) the task's stdout and stderr FIFOs, and their staging FIFOs, in `logDir`; returns the task's FIFOs' paths. */
export function createTaskFifos(logDir: string, taskName: string): TaskFifos {
  if (!isSafeTaskName(taskName)) throw new FifoError(`task name ${JSON.stringify(taskName)} cannot name a log file`);
  mkdirSync(logDir, { recursive: true, mode: 0o755 });
  const paths = {} as TaskFifos;
  for (const type of LOG_TYPES) {
    const path = fifoPath(logDir, taskName, type);
    ensureFifo(path);
    ensureFifo(stageFifoPath(path));
    paths[type] = path;
  }
  return paths;
}

function ensureFifo(path: string): void {
  if (mkfifo(path, FIFO_MODE) === 0) return;
  const code = errno();
  if (code !== osConstants.errno.EEXIST) throw new FifoError(`creating FIFO ${path}: ${errnoName(code)}`);
  const existing = lstatSync(path);
  if (existing.isFIFO()) return;
  if (existing.isSymbolicLink()) throw new FifoError(`refusing ${path}: it is a symbolic link, not a FIFO`);
  throw new FifoError(`refusing ${path}: it exists and is not a FIFO`);
}

/**
 * How a FIFO is opened: `reader` (the logmon) and `spare` (the executor's
 * keep-alive) are read-write and non-blocking, so they never see EOF and
 * never block; `writer` is the task's end.
 */
export type FifoAccess = "reader" | "spare" | "writer";

const ACCESS_FLAGS: Record<FifoAccess, number> = {
  reader: constants.O_RDWR | constants.O_NONBLOCK,
  spare: constants.O_RDWR | constants.O_NONBLOCK,
  writer: constants.O_WRONLY,
};

/** Opens a FIFO without following a symlink; throws FifoError for a symlink or anything but a FIFO. */
export function openFifo(path: string, access: FifoAccess): number {
  let fd: number;
  try {
    fd = openSync(path, ACCESS_FLAGS[access] | constants.O_NOFOLLOW | O_CLOEXEC_FLAG);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new FifoError(`refusing ${path}: it is a symbolic link, not a FIFO`);
    throw new FifoError(`opening FIFO ${path}: ${code ?? String(err)}`);
  }
  if (!fstatSync(fd).isFIFO()) {
    closeSync(fd);
    throw new FifoError(`refusing ${path}: it is not a FIFO`);
  }
  return fd;
}

/**
 * True when some process other than the caller has `path` (a FIFO) open for
 * reading, as the executor's spare end is: a non-blocking open for writing
 * fails with ENXIO where no reader exists. False where the path is missing.
 */
export function fifoHasReader(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | O_CLOEXEC_FLAG);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENXIO" || code === "ENOENT") return false;
    if (code === "ELOOP") throw new FifoError(`refusing ${path}: it is a symbolic link, not a FIFO`);
    throw new FifoError(`opening FIFO ${path}: ${code ?? String(err)}`);
  }
  const isFifo = fstatSync(fd).isFIFO();
  closeSync(fd);
  if (!isFifo) throw new FifoError(`refusing ${path}: it is not a FIFO`);
  return true;
}

/** Raises the pipe's buffer to LOG_PIPE_SIZE; returns the size now in effect, or -1 where refused. */
export function enlargePipe(fd: number): number {
  return fcntl(fd, F_SETPIPE_SZ, LOG_PIPE_SIZE);
}

/** The pipe's buffer size in bytes (-1 where it cannot be read). */
export function pipeSize(fd: number): number {
  return fcntl(fd, F_GETPIPE_SZ, 0);
}
