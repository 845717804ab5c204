/** Detaching what is mounted below a directory, before deleting it. */
import { MNT_DETACH, umount2 } from "./libc.ts";
import { mountsUnder } from "../lib/procfs.ts";

/**
 * Lazily unmounts everything at or below `path`, deepest first, except the
 * mount points in `keep`; returns what it detached.
 */
export function detachMountsUnder(path: string, keep: readonly string[] = []): string[] {
  const points = mountsUnder(path).filter((point) => !keep.includes(point));
  for (const point of points) umount2(point, MNT_DETACH);
  return points;
}
