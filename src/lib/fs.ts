/** File operations that must not leave a half-written file behind. */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old
 * file or the complete new one: write a temporary file, fsync it, rename it
 * over the target, fsync the directory.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): void {
  const temp = `${path}.tmp-${process.pid}`;
  const fd = openSync(temp, "w", mode);
  try {
    if (typeof data === "string") writeSync(fd, data);
    else writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  const dir = openSync(dirname(path), "r");
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
