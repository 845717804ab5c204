/**
 * The space a directory tree takes on its own file system, as `du -sx`
 * counts it: allocated blocks of every file, links not followed, other
 * mounts (a secrets tmpfs, a host volume bound into a task dir) not
 * entered, even a bind of a directory of the same file system, which
 * `du -x` would count: statx tells a mount's root, so no mount table is
 * read (with a thousand tasks' secrets mounts, a read costs over 1 ms).
 *
 * The walk reads directories (streamed, so a huge one is never read whole)
 * and stats entries with plain calls, a slice of WALK_SLICE_ENTRIES at a
 * time, and lets the event loop run between slices: an alloc dir of a dozen
 * entries costs one short slice, not a round trip to the I/O threads per
 * entry, and a large tree never holds the agent's event loop for long.
 */
import { opendirSync, type Dir, type Dirent } from "node:fs";
import { join } from "node:path";
import { sysStat, type FileStat } from "../runtime/libc.ts";

/** Bytes in one st_blocks unit (fixed by POSIX, whatever the file system's block size). */
const STAT_BLOCK_BYTES = 512;

/** Entries looked at between two turns of the event loop: well under a millisecond of work. */
export const WALK_SLICE_ENTRIES = 256;

export interface DirUsage {
  bytes: number;
  /** Entries looked at; the walk stops at `maxEntries` and says so. */
  entries: number;
  truncated: boolean;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The next entry, or null at the end (or when the directory went away meanwhile). */
function readEntry(handle: Dir): Dirent | null {
  try {
    return handle.readSync();
  } catch {
    return null;
  }
}

function statOf(path: string): FileStat | null {
  try {
    return sysStat(path, false);
  } catch {
    // Gone since the directory was read.
    return null;
  }
}

export async function dirUsage(root: string, maxEntries: number): Promise<DirUsage> {
  const usage: DirUsage = { bytes: 0, entries: 0, truncated: false };
  const top = statOf(root);
  if (!top) return usage;
  const pending = [root];
  let slice = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let handle: Dir;
    try {
      handle = opendirSync(dir);
    } catch {
      // Removed, or unreadable, while being walked: nothing to count there.
      continue;
    }
    try {
      for (let entry = readEntry(handle); entry !== null; entry = readEntry(handle)) {
        if (usage.entries >= maxEntries) {
          usage.truncated = true;
          return usage;
        }
        usage.entries++;
        if (++slice >= WALK_SLICE_ENTRIES) {
          slice = 0;
          await nextTurn();
        }
        const path = join(dir, entry.name);
        const stat = statOf(path);
        if (!stat || stat.device !== top.device || stat.mountRoot) continue;
        usage.bytes += stat.blocks * STAT_BLOCK_BYTES;
        if (stat.kind === "directory") pending.push(path);
      }
    } finally {
      handle.closeSync();
    }
  }
  return usage;
}
