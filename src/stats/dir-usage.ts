/**
 * The space a directory tree takes on its own file system, as `du -sx`
 * counts it: allocated blocks of every file, links not followed, other
 * mounts (a secrets tmpfs) not entered. Asynchronous, so a large tree never
 * holds the agent's event loop.
 */
import { lstat, opendir } from "node:fs/promises";
import { join } from "node:path";

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
  try {
    device = (await lstat(root)).dev;
  } catch {
    return usage;
  }
  const pending = [root];
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
        if (stat.dev !== device) continue;
        usage.bytes += stat.blocks * STAT_BLOCK_BYTES;
        if (stat.isDirectory()) pending.push(path);
      } catch {
        // Gone since the directory was read.
      }
    }
  }
  return usage;
}
