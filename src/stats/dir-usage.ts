/**
 * The space a directory tree takes on its own file system, as `du -sx`
 * counts it: allocated blocks of every file, links not followed, other
 * mounts (a secrets tmpfs, a host volume bound into a task dir) not
 * entered, even a bind of a directory of the same file system, which
 * `du -x` would count: statx tells a directory that is a mount's root, so no
 * mount table is read (with a thousand tasks' secrets mounts, one read
 * costs over 1 ms).
 *
 * The walk lists directories and stats entries with plain calls, a slice of
 * WALK_SLICE_ENTRIES at a time, and lets the event loop run between slices:
 * an alloc dir of a dozen entries costs one short slice, not a round trip to
 * the I/O threads per entry, and a large tree never holds the agent's event
 * loop for long. (Bun's Dir.readSync lists the whole directory again on
 * every call, so each directory is listed once, whole.) A walk repeated on a
 * timer keeps its listings (DirListings) and lists again only directories
 * that changed.
 */
import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";
import { sysStat } from "../runtime/libc.ts";

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

function statOf(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    // Gone since the directory was listed.
    return null;
  }
}

/** Whether a directory is the root of a mount; one that cannot be looked at counts as one (it is not entered). */
function isMountRoot(path: string): boolean {
  try {
    return sysStat(path, false).mountRoot;
  } catch {
    return true;
  }
}

/**
 * The names in each directory a walk listed, kept for the next walk of the
 * same tree: a directory whose modification time has not moved since has
 * the same entries, and is not listed again (its entries are still looked
 * at, so a file that grew counts). Listing is most of a walk's cost.
 */
export class DirListings {
  private kept = new Map<string, { mtimeMs: number; names: string[] }>();
  private next = new Map<string, { mtimeMs: number; names: string[] }>();

  list(dir: string, mtimeMs: number): string[] {
    const known = this.kept.get(dir);
    const listing = known?.mtimeMs === mtimeMs ? known : { mtimeMs, names: readNames(dir) };
    this.next.set(dir, listing);
    return listing.names;
  }

  /** A walk ended: what it listed is kept, directories it no longer saw are forgotten. */
  endWalk(): void {
    this.kept = this.next;
    this.next = new Map();
  }
}

function readNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    // Removed, or unreadable, while being walked: nothing to count there.
    return [];
  }
}

/** `listings`, when given, carries directory listings from one walk of the tree to the next. */
export async function dirUsage(root: string, maxEntries: number, listings?: DirListings): Promise<DirUsage> {
  const usage: DirUsage = { bytes: 0, entries: 0, truncated: false };
  const top = statOf(root);
  if (!top) return usage;
  const list = (dir: string, mtimeMs: number) => (listings ? listings.list(dir, mtimeMs) : readNames(dir));
  const pending: { dir: string; mtimeMs: number }[] = [{ dir: root, mtimeMs: top.mtimeMs }];
  let slice = 0;
  try {
    while (pending.length > 0) {
      const { dir, mtimeMs } = pending.pop()!;
      for (const name of list(dir, mtimeMs)) {
        if (usage.entries >= maxEntries) {
          usage.truncated = true;
          return usage;
        }
        usage.entries++;
        if (++slice >= WALK_SLICE_ENTRIES) {
          slice = 0;
          await nextTurn();
        }
        const path = join(dir, name);
        const stat = statOf(path);
        if (!stat || stat.dev !== top.dev) continue;
        if (stat.isDirectory()) {
          if (isMountRoot(path)) continue;
          pending.push({ dir: path, mtimeMs: stat.mtimeMs });
        }
        usage.bytes += stat.blocks * STAT_BLOCK_BYTES;
      }
    }
    return usage;
  } finally {
    listings?.endWalk();
  }
}
