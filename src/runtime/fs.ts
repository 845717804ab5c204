/**
 * File operations that must not leave a half-written file behind. Built on
 * the libc calls of runtime/libc.ts rather than node:fs, because the
 * per-task executor uses this too and node:fs costs it ~0.5 MiB.
 */
import { O_CREAT, O_DIRECTORY, O_RDONLY, O_TRUNC, O_WRONLY, sysClose, sysFsync, sysOpen, sysRename, sysUnlink, sysWrite } from "./libc.ts";

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old
 * file or the complete new one: write a temporary file, fsync it, rename it
 * over the target, fsync the directory.
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
  const fd = sysOpen(temp, O_WRONLY | O_CREAT | O_TRUNC, mode);
  try {
    try {
      sysWrite(fd, data);
      if (durable) sysFsync(fd);
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
  const dir = sysOpen(path.slice(0, Math.max(path.lastIndexOf("/"), 1)), O_RDONLY | O_DIRECTORY);
  try {
    sysFsync(dir);
  } finally {
    sysClose(dir);
  }
}
