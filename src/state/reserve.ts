/**
 * Room kept on the disk that holds the state databases, so that stopping
 * work is always possible there, even when a task has filled the disk.
 *
 *   start ──> ensure(): RESERVE_CHUNKS files in the data dir
 *   a state write fails with "disk full" ──> release() one chunk, retry the write once
 *   the disk watch sees free space again ──> ensure() recreates what was spent
 *
 * While the reserve is released the agent refuses new work (a job
 * registration) but records everything that stops, kills or reports tasks.
 */
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { BYTES_PER_MIB } from "../lib/units.ts";

/**
 * Enough for many state writes (a stop, the kills, their events and WAL
 * frames), in chunks: each write the full disk refuses spends one chunk, so
 * a task that is still filling the disk can take at most the chunk freed
 * before it is stopped, and the rest serves the writes that follow.
 */
export const RESERVE_CHUNKS = 4;
export const RESERVE_CHUNK_BYTES = 2 * BYTES_PER_MIB;

/** The reserve's file names in the data dir: disk-reserve.0, .1, ... */
export const RESERVE_FILE = "disk-reserve";

/** Written in pieces so making the reserve never holds a large buffer. */
const WRITE_PIECE_BYTES = 256 * 1024;

export class DiskReserve {
  private readonly paths: string[];
  private readonly present: boolean[];

  constructor(
    dir: string,
    readonly chunkBytes: number = RESERVE_CHUNK_BYTES,
    chunks: number = RESERVE_CHUNKS,
  ) {
    this.paths = Array.from({ length: chunks }, (_, i) => join(dir, `${RESERVE_FILE}.${i}`));
    this.present = this.paths.map(() => false);
  }

  /** The whole reserve's size. */
  get bytes(): number {
    return this.chunkBytes * this.paths.length;
  }

  /** Whether the whole reserve is held (none of it spent). */
  get held(): boolean {
    return this.present.every(Boolean);
  }

  /** Creates the chunks that are missing; false when the disk has no room for all of them yet. */
  ensure(): boolean {
    for (const [i, path] of this.paths.entries()) {
      if (this.present[i]) continue;
      if (!writeZeros(path, this.chunkBytes)) return false;
      this.present[i] = true;
    }
    return true;
  }

  /** Frees one chunk; true when there was one to free. */
  release(): boolean {
    const i = this.present.lastIndexOf(true);
    if (i < 0) return false;
    this.present[i] = false;
    removeFile(this.paths[i]!);
    return true;
  }
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** A file of `bytes` zeros; false (and no file) when the disk has no room. */
function writeZeros(path: string, bytes: number): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "w", 0o600);
    const piece = new Uint8Array(Math.min(WRITE_PIECE_BYTES, bytes));
    for (let written = 0; written < bytes; written += piece.length) writeSync(fd, piece, 0, Math.min(piece.length, bytes - written));
    return true;
  } catch {
    // No room yet: a partial file would only take space the state needs.
    removeFile(path);
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** SQLite's "database or disk is full" (SQLITE_FULL), however the driver reports it. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === "SQLITE_FULL" || code === "ENOSPC" || (err instanceof Error && /database or disk is full|no space left/i.test(err.message));
}

/**
 * Runs a state write; when the disk is full, releases a chunk of the reserve
 * and tries once more, so a stop or a kill is recorded even on a full disk.
 */
export function writeWithReserve<T>(reserve: DiskReserve | undefined, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (!isDiskFull(err) || !reserve?.release()) throw err;
    return write();
  }
}
