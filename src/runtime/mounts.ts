/**
 * Mounts below directories that others can write to: a task's directory
 * (host volumes of raw_exec tasks), an isolated task's root while it is
 * built (host volumes of exec tasks), and detaching what is mounted below a
 * directory before deleting it.
 *
 *   bindBeneath:   open base ─> each component with openat(O_NOFOLLOW), made when missing
 *                  ─> clone the source's mount tree (detached) ─> nosuid, nodev[, read-only]
 *                  ─> attach it on the last descriptor
 *   unbindBeneath: the same walk, nothing made ─> while the end is a mount root: detach it
 *
 * No path below `base` is ever looked up whole: a symlink a task put in
 * place of a component (or swapped in between two calls) ends the walk with
 * an error instead of being followed, and the mount lands on the directory
 * the walk holds open, never on where a path points by then. The bind is
 * read-only from its first instant, not remounted so afterwards.
 */
import { MNT_DETACH, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, moveMount, mountSetattrTree, O_DIRECTORY, O_NOFOLLOW, O_RDONLY, openTreeClone, SysError, sysClose, sysMkdirAt, sysOpen, sysOpenAt, sysStat, errno, strerror, umount2 } from "./libc.ts";
import { mountsUnder } from "../lib/procfs.ts";

/** Mode of the directories a bind makes on its way: the mount covers the last one, the others are the operator's layout. */
const MADE_DIR_MODE = 0o755;
/**
 * The most binds unbindBeneath detaches from one point: a task whose
 * volume was bound again after an agent crash has two; more means
 * something keeps mounting there, and the loop must end.
 */
const MAX_STACKED_MOUNTS = 16;

/**
 * Lazily unmounts everything at or below `path`, deepest first, except the
 * mount points in `keep`; returns what it detached.
 */
export function detachMountsUnder(path: string, keep: readonly string[] = []): string[] {
  const points = mountsUnder(path).filter((point) => !keep.includes(point));
  for (const point of points) umount2(point, MNT_DETACH);
  return points;
}

/** A bind below a directory that cannot be made or undone; the message names the path inside. */
export class BeneathMountError extends Error {
  override name = "BeneathMountError";
}

/** The components of `relative`, which must stay below its base: no "..", ".", or empty path. */
function components(relative: string): string[] {
  const parts = relative.split("/").filter(Boolean);
  if (parts.length === 0) throw new BeneathMountError(`"${relative}" names the directory itself`);
  if (parts.some((part) => part === "." || part === ".." || part.includes("\0"))) throw new BeneathMountError(`"${relative}" must not contain "." or ".." components`);
  return parts;
}

function describe(err: unknown, soFar: string): BeneathMountError {
  // O_DIRECTORY | O_NOFOLLOW answers ENOTDIR for a symlink, ELOOP on some kernels.
  if (err instanceof SysError && (err.code === "ELOOP" || err.code === "ENOTDIR")) return new BeneathMountError(`${soFar} is not a directory (a symlink or a file is in its place)`);
  return new BeneathMountError(`${soFar}: ${err instanceof Error ? err.message : String(err)}`);
}

/**
 * Opens directory `relative` beneath `base` one component at a time, never
 * following a symlink; makes missing ones when `make`. Returns the
 * descriptors of the last directory and its parent, or null when a component
 * is missing and not made.
 */
function walk(base: string, relative: string, make: boolean): { fd: number; parent: number; name: string } | null {
  const parts = components(relative);
  let fd = sysOpen(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  let parent = -1;
  try {
    for (const [index, name] of parts.entries()) {
      const soFar = parts.slice(0, index + 1).join("/");
      if (make) {
        try {
          sysMkdirAt(fd, name, MADE_DIR_MODE);
        } catch (err) {
          throw describe(err, soFar);
        }
      }
      let next: number;
      try {
        next = sysOpenAt(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (err) {
        if (!make && err instanceof SysError && err.code === "ENOENT") return null;
        throw describe(err, soFar);
      }
      if (parent >= 0) sysClose(parent);
      parent = fd;
      fd = next;
    }
    const result = { fd, parent, name: parts.at(-1)! };
    fd = parent = -1;
    return result;
  } finally {
    if (fd >= 0) sysClose(fd);
    if (parent >= 0) sysClose(parent);
  }
}

function closeWalk(found: { fd: number; parent: number }): void {
  sysClose(found.fd);
  sysClose(found.parent);
}

/**
 * Binds host directory `source` (and what is mounted below it) at
 * `relative` beneath `base`, making the directories on the way; nosuid and
 * nodev always, read-only when asked.
 */
export function bindBeneath(source: string, base: string, relative: string, options: { readOnly: boolean }): void {
  const target = walk(base, relative, true)!;
  try {
    const tree = openTreeClone(source);
    if (tree < 0) throw new BeneathMountError(`cannot bind ${source}: ${strerror(errno())}`);
    try {
      const attributes = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (options.readOnly ? MOUNT_ATTR_RDONLY : 0);
      if (mountSetattrTree(tree, attributes) < 0) throw new BeneathMountError(`cannot set the attributes of the bind of ${source}: ${strerror(errno())}`);
      if (moveMount(tree, target.fd) < 0) throw new BeneathMountError(`cannot bind ${source} on ${relative}: ${strerror(errno())}`);
    } finally {
      sysClose(tree);
    }
  } finally {
    closeWalk(target);
  }
}

/**
 * Detaches whatever is mounted at `relative` beneath `base` (binds stacked
 * there included), found by the same walk as bindBeneath's; returns how many
 * it detached. A path that is gone has nothing mounted: 0.
 */
export function unbindBeneath(base: string, relative: string): number {
  let detached = 0;
  for (;;) {
    const found = walk(base, relative, false);
    if (!found) return detached;
    try {
      if (!sysStat(found.fd).mountRoot) return detached;
      if (detached >= MAX_STACKED_MOUNTS) throw new BeneathMountError(`${relative}: still mounted after ${detached} detaches`);
      // The descriptor's own path: the mount the walk reached, never what a path names now.
      if (umount2(`/proc/self/fd/${found.fd}`, MNT_DETACH) < 0) throw new BeneathMountError(`cannot unmount ${relative}: ${strerror(errno())}`);
      detached++;
    } finally {
      closeWalk(found);
    }
  }
}
