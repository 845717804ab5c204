/**
 * The space a directory tree takes on its own file system, as `du -sx`
 * counts it: allocated blocks of every file, links not followed, other
 * mounts (a secrets tmpfs, a host volume bound into a task dir) not
 * entered, even a bind of a directory of the same file system, which
 * `du -x` would count. Asynchronous, so a large tree never holds the
 * agent's event loop.
 */
import { lstat, opendir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { mountsUnder } from "../lib/procfs.ts";

/** Bytes in one st_blocks unit (fixed by POSIX, whatever the file system's block size). */
const STAT_BLOCK_BYTES = 512;

export interface DirUsage {
  bytes: number;
  /** Entries looked at; the walk stops at `maxEntries` and says so. */
  entries: number;
  truncated: boolean;
}

export async function dirUsage(root: string, maxEntries: number): Promise<DirUsage> {
  const usage: DirUsage = { bytes: 0, entries: 0, truncated: false };
  let device: number;
  let top: string;
  try {
    // Mount points are listed by their real paths.
    top = await realpath(root);
    device = (await lstat(top)).dev;
  } catch {
    return usage;
  }
  // A bind has its source's device: only the mount table tells it from a plain directory.
  const mountPoints = new Set(mountsUnder(top).filter((point) => point !== top));
  const pending = [top];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let handle;
    try {
      handle = await opendir(dir);
    } catch {
      // Removed, or unreadable, while being walked: nothing to count there.
      continue;
    }
    for await (const entry of handle) {
      if (usage.entries >= maxEntries) {
        usage.truncated = true;
        // Leaving the loop closes the directory.
        return usage;
      }
      usage.entries++;
      const path = join(dir, entry.name);
      try {
        const stat = await lstat(path);
        if (stat.dev !== device || mountPoints.has(path)) continue;
        usage.bytes += stat.blocks * STAT_BLOCK_BYTES;
        if (stat.isDirectory()) pending.push(path);
      } catch {
        // Gone since the directory was read.
      }
    }
  }
  return usage;
}
