/**
 * One stream's rotated files in Nomad's naming, `<task>.<type>.N`, the
 * highest N live.
 *
 *   open ──► scan the log dir: live = highest index (0 when none), appended to
 *   room() ── bytes the live file may still take (its size limit less its size)
 *   rotate() ── close live, create N+1, delete N+1-maxFiles and older
 *
 * The files sit in the task's alloc dir, which the task can write: they are
 * opened with O_NOFOLLOW so a planted symlink is never written through.
 * Writes go through `offset` (splice advances it), never O_APPEND, which
 * splice refuses.
 */
import { close, closeSync, constants, fstatSync, openSync, readSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { logFileIndexes, logFileIndexesIn, logFileName, type LogType } from "../log-layout/layout.ts";
import { O_CLOEXEC_FLAG } from "../runtime/libc.ts";
import { BYTES_PER_MIB } from "../lib/units.ts";


const LOG_FILE_MODE = 0o644;
const NEWLINE = 0x0a;

/** Up to this many indexes are deleted by number; a longer run is pruned from a directory listing. */
const PRUNE_BY_NUMBER_LIMIT = 64;

export interface RotationLimits {
  maxFiles: number;
  maxFileSizeMB: number;
}

export class RotatedFiles {
  /** Write position in the live file; splice(2) advances it. */
  readonly offset = new BigInt64Array(1);
  private liveFd = -1;
  private liveIndex = 0;
  /** Lowest index that may still exist; everything below is deleted. */
  private lowestIndex = 0;
  private maxFiles: number;
  private maxBytes: number;

  constructor(
    private readonly logDir: string,
    private readonly taskName: string,
    private readonly type: LogType,
    limits: RotationLimits,
  ) {
    this.maxFiles = limits.maxFiles;
    this.maxBytes = limits.maxFileSizeMB * BYTES_PER_MIB;
  }

  /**
   * Opens the highest existing index (continuing it) or creates index 0;
   * `listing`: the log dir's names, when the caller has read them already.
   */
  open(listing?: readonly string[]): void {
    const indexes = listing ? logFileIndexesIn(listing, this.taskName, this.type) : logFileIndexes(this.logDir, this.taskName, this.type);
    this.liveIndex = indexes.at(-1) ?? 0;
    this.lowestIndex = indexes[0] ?? 0;
    this.openLive(false);
    this.prune();
  }

  setLimits(limits: RotationLimits): void {
    this.maxFiles = limits.maxFiles;
    this.maxBytes = limits.maxFileSizeMB * BYTES_PER_MIB;
    this.prune();
  }

  get fd(): number {
    return this.liveFd;
  }

  get size(): number {
    return Number(this.offset[0]);
  }

  get index(): number {
    return this.liveIndex;
  }

  /** Path of the live file, for messages. */
  get path(): string {
    return join(this.logDir, logFileName(this.taskName, this.type, this.liveIndex));
  }

  room(): number {
    return this.maxBytes - this.size;
  }

  /** True when the live file is non-empty and ends a line (a rotation here splits none). */
  endsWithNewline(): boolean {
    if (this.size === 0) return false;
    const last = Buffer.alloc(1);
    return readSync(this.liveFd, last, 0, 1, this.size - 1) === 1 && last[0] === NEWLINE;
  }

  rotate(): void {
    closeSync(this.liveFd);
    this.liveFd = -1;
    this.liveIndex += 1;
    this.openLive(true);
    this.prune();
  }

  close(): void {
    if (this.liveFd >= 0) closeSync(this.liveFd);
    this.liveFd = -1;
  }

  private openLive(fresh: boolean): void {
    const path = this.path;
    const flags = constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | O_CLOEXEC_FLAG | (fresh ? constants.O_TRUNC : 0);
    const fd = openSync(path, flags, LOG_FILE_MODE);
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      closeSync(fd);
      throw new Error(`refusing log file ${path}: not a regular file`);
    }
    this.liveFd = fd;
    this.offset[0] = BigInt(stat.size);
  }

  private prune(): void {
    const keepFrom = this.liveIndex - this.maxFiles + 1;
    if (keepFrom <= this.lowestIndex) return;
    // A long gap (a lowered MaxFiles, or a stray high index) is pruned from a
    // listing rather than by trying every number in between.
    const doomed =
      keepFrom - this.lowestIndex > PRUNE_BY_NUMBER_LIMIT
        ? logFileIndexes(this.logDir, this.taskName, this.type).filter((index) => index < keepFrom)
        : Array.from({ length: keepFrom - this.lowestIndex }, (_, i) => this.lowestIndex + i);
    for (const index of doomed) deleteFile(join(this.logDir, logFileName(this.taskName, this.type, index)));
    this.lowestIndex = keepFrom;
  }
}

/**
 * Deletes a rotated-away file: its name goes now, and its pages are freed by
 * a close on the runtime's I/O threads. Freeing a file's cached pages happens
 * where its last reference drops, and in unlink(2) that cost 14 % of the
 * pump's CPU at 10 MB files (0.07 s per GiB of logs, on the pump's thread);
 * holding a descriptor across the unlink moves it to that close. The file is
 * opened without following a symlink or blocking on a FIFO a task planted; a
 * name that cannot be opened is unlinked as before.
 */
function deleteFile(path: string): void {
  let fd = -1;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | O_CLOEXEC_FLAG);
  } catch {
    // Gone already, or not a file to hold: the unlink below settles it.
  }
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
      if (fd >= 0) closeSync(fd);
      throw err;
    }
  }
  if (fd >= 0) close(fd, () => {});
}
