/**
 * File operations that must not leave a half-written file behind. Built on
 * the libc calls of runtime/libc.ts rather than node:fs, because the
 * per-task executor uses this too and node:fs costs it ~0.5 MiB.
 */
import { O_CREAT, O_DIRECTORY, O_RDONLY, O_TMPFILE, O_TRUNC, O_WRONLY, SysError, sysClose, sysFsync, sysLinkOpenFile, sysOpen, sysRename, sysUnlink, sysWrite } from "./libc.ts";

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old
 * file or the complete new one: write an unnamed file in the target's
 * directory, fsync it, name it, rename it over the target, fsync the
 * directory. A process killed on the way leaves no temporary file (only in
 * the instant between naming and renaming it).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): void {
  replaceFile(path, data, mode, true);
}

/**
 * Writes `data` to `path` so that a reader sees the old file or the whole new
 * one (a temporary file renamed over it), without fsync: for a file whose use
 * ends with processes a crash of the host ends too (a task's isolation spec),
 * where the two fsyncs would only delay a task's start.
 */
export function writeFileReplacing(path: string, data: string | Uint8Array, mode = 0o644): void {
  replaceFile(path, data, mode, false);
}

function replaceFile(path: string, data: string | Uint8Array, mode: number, durable: boolean): void {
  const temp = `${path}.tmp-${process.pid}`;
  // Unnamed until it is whole, so a process killed while it writes or syncs leaves nothing behind;
  // a name only for the rename. A file system without O_TMPFILE gets the named temporary file.
  const unnamed = openUnnamed(parentOf(path), mode);
  const fd = unnamed ?? sysOpen(temp, O_WRONLY | O_CREAT | O_TRUNC, mode);
  try {
    try {
      sysWrite(fd, data);
      if (durable) sysFsync(fd);
      if (unnamed !== null) linkReplacingStale(fd, temp);
    } finally {
      sysClose(fd);
    }
    sysRename(temp, path);
  } catch (err) {
    // A full disk: the old file stays, and no half-written temporary beside it.
    try {
      sysUnlink(temp);
    } catch {
      // Already gone.
    }
    throw err;
  }
  if (!durable) return;
  const dir = sysOpen(parentOf(path), O_RDONLY | O_DIRECTORY);
  try {
    sysFsync(dir);
  } finally {
    sysClose(dir);
  }
}

function parentOf(path: string): string {
  return path.slice(0, Math.max(path.lastIndexOf("/"), 1));
}

/** Kernels and file systems without O_TMPFILE answer one of these. */
const NO_TMPFILE = new Set(["EOPNOTSUPP", "EISDIR", "EINVAL"]);

function openUnnamed(dir: string, mode: number): number | null {
  try {
    return sysOpen(dir, O_TMPFILE | O_WRONLY, mode);
  } catch (err) {
    if (err instanceof SysError && NO_TMPFILE.has(err.code)) return null;
    throw err;
  }
}

/** A temporary name left by an earlier process of the same pid (killed between link and rename) is taken over. */
function linkReplacingStale(fd: number, temp: string): void {
  try {
    sysLinkOpenFile(fd, temp);
  } catch (err) {
    if (!(err instanceof SysError && err.code === "EEXIST")) throw err;
    sysUnlink(temp);
    sysLinkOpenFile(fd, temp);
  }
}
