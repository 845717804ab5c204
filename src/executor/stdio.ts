/**
 * The task's stdout and stderr: a FIFO the log pump reads, or a regular file.
 *
 * FIFO: the executor first opens a spare O_RDWR|O_NONBLOCK descriptor and
 * keeps it for its whole life. The FIFO then always has a reader, so a log
 * pump that restarts never makes the task die of SIGPIPE; the task only
 * blocks when the pipe is full, and the new pump reads on where the old one
 * stopped. The task's own descriptor is a separate blocking O_WRONLY open.
 * It holds a spare of the FIFO's staging FIFO the same way, where the agent
 * made one: the bytes a killed pump left between its two moves wait there
 * for the next (logmon/log-stream.ts).
 *
 * Every open uses O_NOFOLLOW: a symlink planted at the path is refused, never
 * followed (it could point the root-owned executor at any file).
 */
import { stageFifoPath } from "../log-layout/layout.ts";
import {
  bytesReadable,
  fcntl,
  F_SETPIPE_SZ,
  O_APPEND,
  O_CREAT,
  O_NOFOLLOW,
  O_NONBLOCK,
  O_RDWR,
  O_WRONLY,
  sysClose,
  sysOpen,
  sysStat,
  type FileStat,
} from "../runtime/libc.ts";

/**
 * Pipe size asked for with F_SETPIPE_SZ: a 1 MiB buffer lets a burst of output
 * wait for the log pump instead of blocking the task (the default is 64 KiB).
 * Unprivileged callers are capped by /proc/sys/fs/pipe-max-size; failure is fine.
 */
export const PIPE_SIZE_BYTES = 1 << 20;

/** One of the task's outputs; each descriptor is closed at most once (a stale number could be reused). */
export class TaskOutput {
  constructor(
    readonly path: string,
    /** The descriptor the task gets as fd 1 or 2; null once the task has its copy. */
    private fd: number | null,
    /** The executor's spare reader-writer on a FIFO, held until the executor exits; null for a file. */
    private spare: number | null,
    /** The same on the FIFO's staging FIFO; null for a file, or a FIFO without a stage. */
    private stageSpare: number | null,
  ) {}

  /** The descriptor to hand the task. */
  get taskFd(): number {
    if (this.fd === null) throw new Error(`${this.path}: already handed to the task`);
    return this.fd;
  }

  /** Closes the executor's copy of the task's descriptor. */
  releaseTaskSide(): void {
    if (this.fd !== null) sysClose(this.fd);
    this.fd = null;
  }

  /** Bytes the log pump has not read yet from this FIFO (0 for a file). */
  unreadBytes(): number {
    return unread(this.spare) + unread(this.stageSpare);
  }

  /** Closes everything: the last step before the executor exits, or a failed launch. */
  close(): void {
    this.releaseTaskSide();
    if (this.spare !== null) sysClose(this.spare);
    if (this.stageSpare !== null) sysClose(this.stageSpare);
    this.spare = null;
    this.stageSpare = null;
  }
}

const unread = (fd: number | null) => (fd === null ? 0 : Math.max(0, bytesReadable(fd)));

function describe(path: string, err: unknown): Error {
  if ((err as { code?: string }).code === "ELOOP") return new Error(`${path}: is a symbolic link; refusing to follow it`);
  return new Error(`open ${path}: ${(err as Error).message}`);
}

/**
 * Opens the task's output at `path`. The spare end's open comes first and
 * tells a FIFO from anything else without a stat of the path before it (one
 * system call less per stream, per task launched): read-write and
 * non-blocking, it neither waits for a reader nor changes a file. Whatever
 * is not a FIFO is then opened as a regular file, as it always was.
 */
export function openTaskOutput(path: string): TaskOutput {
  let spare: number;
  try {
    spare = sysOpen(path, O_RDWR | O_NONBLOCK | O_NOFOLLOW);
  } catch (err) {
    if ((err as { code?: string }).code === "ELOOP") throw describe(path, err);
    return openFile(path);
  }
  let fifo: FileStat;
  try {
    fifo = sysStat(spare);
  } catch (err) {
    sysClose(spare);
    throw describe(path, err);
  }
  if (fifo.kind !== "fifo") {
    sysClose(spare);
    return openFile(path);
  }
  return openFifo(path, spare, fifo.ino);
}

/** The task's end of the FIFO whose spare end (inode `ino`) is open. */
function openFifo(path: string, spare: number, ino: FileStat["ino"]): TaskOutput {
  let fd: number;
  try {
    // The spare descriptor is a reader, so this open does not wait for the log pump.
    fd = sysOpen(path, O_WRONLY | O_NOFOLLOW);
    if (sysStat(fd).ino !== ino) {
      sysClose(fd);
      throw new Error("changed while it was being opened");
    }
    fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE_BYTES);
  } catch (err) {
    sysClose(spare);
    throw describe(path, err);
  }
  return new TaskOutput(path, fd, spare, openStageSpare(path));
}

/**
 * The spare end of the FIFO's stage, or null: an agent of an older drover
 * made none, and anything else a task planted there is left alone (the pump
 * then moves its bytes without a stage, as it does for a stage no one holds).
 */
function openStageSpare(fifo: string): number | null {
  let fd: number;
  try {
    fd = sysOpen(stageFifoPath(fifo), O_RDWR | O_NONBLOCK | O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    if (sysStat(fd).kind === "fifo") return fd;
  } catch {
    // Not a stage this executor can vouch for: the same as none.
  }
  sysClose(fd);
  return null;
}

function openFile(path: string): TaskOutput {
  let fd: number;
  try {
    fd = sysOpen(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o644);
  } catch (err) {
    throw describe(path, err);
  }
  if (sysStat(fd).kind !== "file") {
    sysClose(fd);
    throw new Error(`${path}: is neither a FIFO nor a regular file`);
  }
  return new TaskOutput(path, fd, null, null);
}
