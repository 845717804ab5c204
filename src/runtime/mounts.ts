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
import { constants as osConstants } from "node:os";
import { ioctlBuffer, MNT_DETACH, mount, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY, moveMount, mountSetattrTree, O_DIRECTORY, O_NOFOLLOW, O_RDONLY, O_RDWR, openTreeClone, SysError, sysClose, sysError, sysMkdirAt, sysOpen, sysOpenAt, sysStat, errno, strerror, umount2 } from "./libc.ts";
import { mountsUnder } from "../lib/procfs.ts";

/** Mode of the directories a bind makes on its way: the mount covers the last one, the others are the operator's layout. */
const MADE_DIR_MODE = 0o755;
/**
 * The most binds unbindBeneath detaches from one point: a task whose
 * volume was bound again after an agent crash has two; more means
 * something keeps mounting there, and the loop must end.
 */
const MAX_STACKED_MOUNTS = 16;

export interface Detached {
  detached: string[];
  failed: string[];
}

/** Lazily unmounts each of `points`, in order. */
export function detach(points: readonly string[]): Detached {
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

// Loop devices (linux/loop.h), for an alloc dir's own file system: an image
// file mounted without a `mount` process (losetup's work, done here).
const LOOP_CTL_GET_FREE = 0x4c82;
const LOOP_CONFIGURE = 0x4c0a;
const LO_FLAGS_AUTOCLEAR = 4;
/**
 * The device reads and writes its image with O_DIRECT: without it every block
 * written to the image's file system is cached twice and written twice, the
 * second time by the loop's kernel thread through the host's page cache (a
 * task's 1 GiB of logs cost the machine another GiB of buffered writes).
 */
const LO_FLAGS_DIRECT_IO = 16;
/** struct loop_config: fd u32, block_size u32, struct loop_info64 (232 bytes), 8 reserved u64. */
const LOOP_CONFIG_BYTES = 304;
/** loop_config.info.lo_flags: the info starts at 8, lo_flags is at 52 in it. */
const LOOP_CONFIG_FLAGS_OFFSET = 60;
/** Another process can take the free device between asking and configuring it (EBUSY): ask again, this often. */
const LOOP_ATTACH_TRIES = 8;
export const MS_NOATIME = 0x400;

/**
 * How often a mount(2) in the agent's namespace is made where it says
 * ENOENT. Linux (seen on 6.18) says so now and then while other mounts come
 * and go, as allocs' are torn down under churn: at 80 jobs a second about one
 * task start in 10,000 failed its secrets tmpfs so, and at the failure the
 * target's descriptor was valid, its mount attached, and the same call made
 * again at once succeeded.
 */
export const MOUNT_ENOENT_TRIES = 3;

/**
 * Makes `call` (a mount(2): 0, or -1 with errno) until it succeeds, fails with
 * anything but ENOENT, or has been made MOUNT_ENOENT_TRIES times; returns 0 or
 * the last errno.
 */
export function mountRetryingEnoent(call: () => number, lastErrno: () => number = errno): number {
  for (let attempt = 1; ; attempt++) {
    if (call() === 0) return 0;
    const code = lastErrno();
    if (code !== osConstants.errno.ENOENT || attempt >= MOUNT_ENOENT_TRIES) return code;
  }
}

/**
 * Mounts the file system in `image` on `target` through a free loop device
 * that clears itself once the file system is unmounted (LOOP_CONFIGURE,
 * Linux 5.8+). Throws SysError; nothing stays attached on a failure.
 */
export function mountLoopImage(image: string, target: string, fsType: string, flags: number): void {
  const control = sysOpen("/dev/loop-control", O_RDWR);
  try {
    for (let attempt = 1; ; attempt++) {
      const number = ioctlBuffer(control, LOOP_CTL_GET_FREE, new Uint8Array(8));
      if (number < 0) throw sysError("ioctl LOOP_CTL_GET_FREE", "/dev/loop-control");
      const device = `/dev/loop${number}`;
      const loop = sysOpen(device, O_RDWR);
      try {
        const backing = sysOpen(image, O_RDWR);
        const config = new Uint8Array(LOOP_CONFIG_BYTES);
        const view = new DataView(config.buffer);
        view.setUint32(0, backing, true);
        view.setUint32(LOOP_CONFIG_FLAGS_OFFSET, LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO, true);
        let failed = ioctlBuffer(loop, LOOP_CONFIGURE, config) < 0 ? sysError("ioctl LOOP_CONFIGURE", device) : null;
        if (failed?.code === "EINVAL") {
          // A backing file system without O_DIRECT: buffered, as losetup does by default.
          view.setUint32(LOOP_CONFIG_FLAGS_OFFSET, LO_FLAGS_AUTOCLEAR, true);
          failed = ioctlBuffer(loop, LOOP_CONFIGURE, config) < 0 ? sysError("ioctl LOOP_CONFIGURE", device) : null;
        }
        sysClose(backing);
        if (failed?.code === "EBUSY" && attempt < LOOP_ATTACH_TRIES) continue;
        if (failed) throw failed;
        // The mount holds the device from here; closing our descriptor then leaves autoclear to the unmount.
        if (mount(device, target, fsType, flags, "") !== 0) throw sysError("mount", target);
        return;
      } finally {
        sysClose(loop);
      }
    }
  } finally {
    sysClose(control);
  }
}
