/** Detaching what is mounted below a directory, before deleting it. */
import { MNT_DETACH, umount2 } from "./libc.ts";
import { mountsUnder } from "../lib/procfs.ts";

/**
 * Lazily unmounts everything at or below `path`, deepest first, except the
 * mount points in `keep`; returns what it detached, and what it could not.
 */
export function detachMountsUnder(path: string, keep: readonly string[] = []): { detached: string[]; failed: string[] } {
  const detached: string[] = [];
  const failed: string[] = [];
  for (const point of mountsUnder(path).filter((each) => !keep.includes(each))) {
    (umount2(point, MNT_DETACH) === 0 ? detached : failed).push(point);
  }
  return { detached, failed };
}
