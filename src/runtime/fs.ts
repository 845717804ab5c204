/**
 * File operations that must not leave a half-written file behind. Built on
 * the libc calls of runtime/libc.ts rather than node:fs, because the
 * per-task executor uses this too and node:fs costs it ~0.5 MiB.
 */
import { O_CREAT, O_DIRECTORY, O_RDONLY, O_TRUNC, O_WRONLY, sysClose, sysFsync, sysOpen, sysRename, sysWrite } from "./libc.ts";

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old
 * file or the complete new one: write a temporary file, fsync it, rename it
 * over the target, fsync the directory.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): void {
  const temp = `${path}.tmp-${process.pid}`;
  const fd = sysOpen(temp, O_WRONLY | O_CREAT | O_TRUNC, mode);
  try {
    sysWrite(fd, data);
    sysFsync(fd);
  } finally {
    sysClose(fd);
  }
  sysRename(temp, path);
  const dir = sysOpen(path.slice(0, Math.max(path.lastIndexOf("/"), 1)), O_RDONLY | O_DIRECTORY);
  try {
    sysFsync(dir);
  } finally {
    sysClose(dir);
  }
}
