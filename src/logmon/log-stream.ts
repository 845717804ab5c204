/**
 * One FIFO pumped into its rotated files.
 *
 * Bytes move with splice(2), inside the kernel, in two steps: from the task's
 * FIFO into the stream's staging FIFO (buffer references move, no byte is
 * copied), then from the staging FIFO into the file (the one copy). A splice
 * into a file holds its source pipe's lock while it writes the page cache;
 * from the task's FIFO directly, the task's next write spun on that lock for
 * the whole copy (a quarter of a `yes | head` writer's CPU), where through the
 * stage the task's FIFO is locked only while references move.
 *
 *   task ─► FIFO ══(move refs)══► stage FIFO ──(copy)──► live file
 *
 * Either step moves bytes out of its pipe only as they land in the next, and
 * the executor holds a spare end of both FIFOs, so a logmon killed at any
 * instant loses nothing and duplicates nothing: the next one first drains the
 * stage into the live file, then resumes at the FIFO's head. A stage no other
 * process holds (the executor not started yet, or an executor of an older
 * drover that does not hold it) would lose its bytes with the logmon, so the
 * stream then splices FIFO -> file directly and looks again every
 * STAGE_PROBE_MS.
 *
 * Near a file's size limit the stream looks at the data before moving it (a
 * tee(2) copy into a scratch pipe, which consumes nothing) so that files end
 * on line boundaries:
 *
 *   room > LINE_WINDOW          splice up to room - LINE_WINDOW, unseen
 *   otherwise, peek up to room + LINE_WINDOW bytes:
 *     all of them fit            move them (a partial last line included)
 *     a newline within room      move through the last one, rotate
 *     file ends a line           rotate (the next line starts the next file)
 *     file ends inside a line    move through that line's end, rotate; a line
 *                                running past the window is cut there; a line
 *                                whose end has not come yet is moved as far as
 *                                it goes and finished on the next round
 *
 * A file therefore passes MaxFileSizeMB only by the rest of the one line that
 * crosses it (at most LINE_WINDOW): a stream's disk use stays within
 * MaxFiles × MaxFileSizeMB plus one line per file.
 */
import { closeSync, fstatSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { enlargePipe, errnoName, FifoError, fifoHasReader, openFifo, pipeSize } from "../log-layout/fifo.ts";
import { fifoPath, type LogType, stageFifoPath } from "../log-layout/layout.ts";
import {
  bytesReadable,
  errno,
  O_CLOEXEC_FLAG,
  O_NONBLOCK_FLAG,
  pipe2,
  SPLICE_F_MOVE,
  SPLICE_F_NONBLOCK,
  splicePipes,
  spliceToFile,
  sysRead,
  tee,
} from "../runtime/libc.ts";
import { RotatedFiles, type RotationLimits } from "./rotated-files.ts";

/**
 * The stretch either side of a file's size limit where the stream looks for
 * line ends: lines up to 64 KiB are never split by a rotation, and a file
 * passes its limit by at most this much (the rest of the line crossing it).
 */
export const LINE_WINDOW = 64 * 1024;

/** How often a stream whose stage no other process holds looks again, after its first move (an older executor never holds it). */
export const STAGE_PROBE_MS = 1_000;

const NEWLINE = 0x0a;
const EMPTY = -1;

/** A pipe to tee(2) into and the buffer to read it back: one per process, shared by every stream. */
export class Scratch {
  readonly readFd: number;
  readonly writeFd: number;
  readonly buffer = Buffer.allocUnsafe(2 * LINE_WINDOW);

  constructor() {
    [this.readFd, this.writeFd] = pipe2(O_NONBLOCK_FLAG | O_CLOEXEC_FLAG);
    // Room for LINE_WINDOW bytes even when the FIFO holds them in many small buffers.
    enlargePipe(this.writeFd);
  }

  /** Copies up to `length` bytes from the head of `pipeFd` without consuming them; null when it has none. */
  peek(pipeFd: number, length: number): Buffer | null {
    const copied = tee(pipeFd, this.writeFd, length, SPLICE_F_NONBLOCK);
    if (copied <= 0) {
      if (copied < 0 && errno() !== osConstants.errno.EAGAIN) throw new Error(`peeking into the log FIFO: ${errnoName(errno())}`);
      return null;
    }
    let read = 0;
    // sysRead, not node:fs: Deno's node:fs refuses descriptors it did not open itself (this one is pipe2's).
    while (read < copied) read += sysRead(this.readFd, this.buffer.subarray(read, copied));
    return this.buffer.subarray(0, copied);
  }
}

export class LogStream {
  readonly fifoPath: string;
  private fifoFd = -1;
  /** The FIFO's buffer: 1 MiB where the kernel allows it (LOG_PIPE_SIZE). */
  private pipeBytes = 0;
  /** The staging FIFO, once another process holds it; -1 before (bytes then move FIFO -> file directly). */
  private stageFd = -1;
  /** Bytes in the stage: left by a killed logmon, or by a copy into the file that failed. */
  private staged = 0;
  private nextStageProbe = 0;
  readonly files: RotatedFiles;

  constructor(
    logDir: string,
    taskName: string,
    readonly type: LogType,
    limits: RotationLimits,
    private readonly scratch: Scratch,
  ) {
    this.fifoPath = fifoPath(logDir, taskName, type);
    this.files = new RotatedFiles(logDir, taskName, type, limits);
  }

  /** Opens the FIFO (refusing a symlink) and the live log file; `listing`: the log dir's names, if read already. */
  open(listing?: readonly string[]): void {
    this.fifoFd = openFifo(this.fifoPath, "reader");
    const enlarged = enlargePipe(this.fifoFd);
    this.pipeBytes = enlarged > 0 ? enlarged : pipeSize(this.fifoFd);
    try {
      this.files.open(listing);
      // Registered before its task starts, a stream finds the stage not held yet; the executor holds
      // it before the task runs, so the first move, with the task's first bytes, looks again.
      this.probeStage(0);
    } catch (err) {
      this.close();
      throw err;
    }
  }

  get fd(): number {
    return this.fifoFd;
  }

  /** Bytes the FIFO can hold before its writer blocks. */
  get capacity(): number {
    return this.pipeBytes;
  }

  /** Moves up to `budget` bytes from the FIFO into the files; returns the bytes moved. */
  move(budget: number): number {
    if (this.staged > 0) this.drainStage();
    else if (this.stageFd < 0 && performance.now() >= this.nextStageProbe) this.probeStage(STAGE_PROBE_MS);
    let moved = 0;
    while (moved < budget) {
      const room = this.files.room();
      if (room <= LINE_WINDOW) {
        const step = this.moveNearLimit(room);
        if (step === EMPTY) break;
        moved += step;
        continue;
      }
      const wanted = Math.min(budget - moved, room - LINE_WINDOW);
      const step = this.splice(wanted);
      if (step === EMPTY) break;
      moved += step;
      // A splice from a pipe moves all it holds up to `wanted`: a short one emptied it, and asking
      // again would only hear EAGAIN. Per wake-up that is a syscall saved, and a task writing in
      // small pieces wakes the pump often.
      if (step < wanted) break;
    }
    return moved;
  }

  /** Moves everything in the FIFO (and a stage a failed copy left) now, not what arrives meanwhile; returns the FIFO's bytes moved. */
  flush(): number {
    const pending = bytesReadable(this.fifoFd);
    return pending > 0 || this.staged > 0 ? this.move(pending) : 0;
  }

  /** True once the FIFO has been deleted (its alloc dir destroyed): nothing can write to it any more. */
  fifoDeleted(): boolean {
    return fstatSync(this.fifoFd).nlink === 0;
  }

  close(): void {
    if (this.fifoFd >= 0) closeSync(this.fifoFd);
    if (this.stageFd >= 0) closeSync(this.stageFd);
    this.fifoFd = -1;
    this.stageFd = -1;
    this.files.close();
  }

  /**
   * Starts moving through the stage once another process holds it, first
   * copying into the live file what a killed logmon left there: those bytes
   * came out of the FIFO before any still in it, and were bound for this file.
   */
  private probeStage(retryAfterMs: number): void {
    this.nextStageProbe = performance.now() + retryAfterMs;
    const path = stageFifoPath(this.fifoPath);
    let fd: number;
    try {
      if (!fifoHasReader(path)) return;
      fd = openFifo(path, "reader");
    } catch (err) {
      // Something a task planted in its log dir in place of the stage: move directly, as without one.
      if (err instanceof FifoError) return;
      throw err;
    }
    // A stage smaller than the FIFO would cut moves short, and a short move reads as an empty FIFO.
    if (enlargePipe(fd) < this.pipeBytes) {
      closeSync(fd);
      return;
    }
    this.stageFd = fd;
    this.staged = bytesReadable(fd);
    if (this.staged > 0) this.drainStage();
  }

  /** Copies everything in the stage into the live file; bytes a failed copy leaves stay staged for the next move. */
  private drainStage(): void {
    while (this.staged > 0) {
      const copied = spliceToFile(this.stageFd, this.files.fd, this.files.offset, this.staged, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
      if (copied <= 0) throw new Error(`moving ${stageFifoPath(this.fifoPath)} into ${this.files.path}: ${copied === 0 ? "the stage ran dry" : errnoName(errno())}`);
      this.staged -= copied;
    }
  }

  private moveNearLimit(room: number): number {
    // The most this file may still take: the limit, plus the rest of a line that crosses it.
    const cap = room + LINE_WINDOW;
    if (cap <= 0) return this.moveThenRotate(0);
    const head = this.scratch.peek(this.fifoFd, cap);
    if (!head) return EMPTY;
    if (room > 0) {
      if (head.length <= room) return this.spliceExactly(head.length);
      const lastNewline = head.subarray(0, room).lastIndexOf(NEWLINE);
      if (lastNewline >= 0) return this.moveThenRotate(lastNewline + 1);
    }
    if (this.files.endsWithNewline()) return this.moveThenRotate(0);
    // The file ends inside a line that crosses the limit: it ends here, however the task's writes cut it.
    const lineEnd = head.indexOf(NEWLINE);
    if (lineEnd >= 0) return this.moveThenRotate(lineEnd + 1);
    // A line longer than the window is cut: at the limit when it is still ahead, else at the cap.
    if (head.length >= cap) return this.moveThenRotate(room > 0 ? room : cap);
    return this.spliceExactly(head.length);
  }

  private moveThenRotate(length: number): number {
    const moved = length > 0 ? this.spliceExactly(length) : 0;
    this.files.rotate();
    return moved;
  }

  /** Moves bytes already seen at the pipe's head; they are there, so this only loops on a short write. */
  private spliceExactly(length: number): number {
    let moved = 0;
    while (moved < length) {
      const step = this.splice(length - moved);
      if (step === EMPTY) break;
      moved += step;
    }
    return moved;
  }

  private splice(length: number): number {
    const moved =
      this.stageFd < 0
        ? spliceToFile(this.fifoFd, this.files.fd, this.files.offset, length, SPLICE_F_NONBLOCK | SPLICE_F_MOVE)
        : splicePipes(this.fifoFd, this.stageFd, length, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
    if (moved > 0) {
      if (this.stageFd >= 0) {
        this.staged = moved;
        this.drainStage();
      }
      return moved;
    }
    if (moved === 0) return EMPTY;
    const code = errno();
    if (code === osConstants.errno.EAGAIN) return EMPTY;
    throw new Error(`moving ${this.fifoPath} into ${this.files.path}: ${errnoName(code)}`);
  }
}
