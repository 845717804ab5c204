/**
 * One FIFO pumped into its rotated files.
 *
 * Bytes move with splice(2), pipe to file inside the kernel: they leave the
 * pipe only as they land in the file, so a logmon killed at any instant loses
 * nothing and duplicates nothing; the next one resumes at the pipe's head.
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
import { enlargePipe, errnoName, openFifo, pipeSize } from "../log-layout/fifo.ts";
import { fifoPath, type LogType } from "../log-layout/layout.ts";
import {
  bytesReadable,
  errno,
  O_CLOEXEC_FLAG,
  O_NONBLOCK_FLAG,
  pipe2,
  SPLICE_F_MOVE,
  SPLICE_F_NONBLOCK,
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
    } catch (err) {
      closeSync(this.fifoFd);
      this.fifoFd = -1;
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

  /** Moves everything in the FIFO now (not what arrives meanwhile); returns the bytes moved. */
  flush(): number {
    const pending = bytesReadable(this.fifoFd);
    return pending > 0 ? this.move(pending) : 0;
  }

  /** True once the FIFO has been deleted (its alloc dir destroyed): nothing can write to it any more. */
  fifoDeleted(): boolean {
    return fstatSync(this.fifoFd).nlink === 0;
  }

  close(): void {
    if (this.fifoFd >= 0) closeSync(this.fifoFd);
    this.fifoFd = -1;
    this.files.close();
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
    const moved = spliceToFile(this.fifoFd, this.files.fd, this.files.offset, length, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
    if (moved > 0) return moved;
    if (moved === 0) return EMPTY;
    const code = errno();
    if (code === osConstants.errno.EAGAIN) return EMPTY;
    throw new Error(`moving ${this.fifoPath} into ${this.files.path}: ${errnoName(code)}`);
  }
}
