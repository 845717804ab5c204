/** Detaching what is mounted below a directory, before deleting it. */
import { MNT_DETACH, umount2 } from "./libc.ts";
import { mountsUnder, parseMountinfo } from "../lib/procfs.ts";
import { readFileSync } from "node:fs";

export interface Detached {
  detached: string[];
  failed: string[];
}

function detach(points: readonly string[]): Detached {
  const detached: string[] = [];
  const failed: string[] = [];
  for (const point of points) (umount2(point, MNT_DETACH) === 0 ? detached : failed).push(point);
  return { detached, failed };
}

/**
 * Lazily unmounts everything at or below `path`, deepest first, except the
 * mount points in `keep`; returns what it detached, and what it could not.
 */
export function detachMountsUnder(path: string, keep: readonly string[] = []): Detached {
  return detach(mountsUnder(path).filter((each) => !keep.includes(each)));
}

let sharedRead: Promise<string[]> | null = null;

/**
 * Every mount point of this namespace, read once for all who ask within one
 * turn of the event loop, and always after they asked. With a thousand tasks
 * there are a thousand secrets mounts, and reading the table takes over a
 * millisecond: a thousand allocs removed together share a few reads instead
 * of each making its own.
 */
function mountPoints(): Promise<string[]> {
  sharedRead ??= new Promise((resolve, reject) =>
    setImmediate(() => {
      sharedRead = null;
      try {
        resolve(parseMountinfo(readFileSync("/proc/self/mountinfo", "utf8")).map((mount) => mount.mountPoint));
      } catch (err) {
        reject(err);
      }
    }),
  );
  return sharedRead;
}

/** detachMountsUnder, reading the mount table with others who ask at the same time. */
export async function detachMountsBelow(path: string): Promise<Detached> {
  const prefix = `${path}/`;
  const points = (await mountPoints()).filter((point) => point === path || point.startsWith(prefix)).sort((a, b) => b.length - a.length);
  return detach(points);
}
