/**
 * An allocation's directory tree, Nomad's layout:
 *
 *   <alloc_dir>/<alloc-id>/
 *     alloc/            shared by the alloc's tasks (NOMAD_ALLOC_DIR)
 *       logs/           <task>.stdout.N, <task>.stderr.N, and the tasks' FIFOs
 *       tmp/
 *       data/           kept across job updates with ephemeral_disk sticky/migrate
 *     <task>/
 *       local/          the task's own files (NOMAD_TASK_DIR)
 *       secrets/        tmpfs (1 MiB, noexec) where the host allows, 0700
 *       tmp/
 *
 *   build ──> buildTask (per task) ──> ... ──> destroy
 *                                              unmount everything below, then delete;
 *                                              never deletes through a mount it could not remove
 *
 * The directory every alloc dir lives in (client.alloc_dir) is a nosuid,
 * nodev mount on the host (protectAllocRoot, at client start): a root task
 * can make a setuid file or a device node in its alloc dir, and neither may
 * work for anyone outside the task.
 */
import { closeSync, constants, cpSync, existsSync, fchmodSync, fchownSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { detachMountsBelow } from "../../runtime/mount-thread.ts";
import { mountRetryingEnoent } from "../../runtime/mounts.ts";
import { AT_RECURSIVE, errno, MNT_DETACH, mount, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, mountSetattr, MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_REC, sysError, umount2 } from "../../runtime/libc.ts";
import { mountsUnder, parseMountinfo } from "../../lib/procfs.ts";
import { taskNameProblem } from "../../structs/names.ts";

/** Size of a task's secrets tmpfs; Nomad's is the same. Secrets are small by nature. */
export const SECRETS_TMPFS_SIZE = "1m";

/** World-writable with the sticky bit, like /tmp: tasks of any user share these. */
const SHARED_MODE = 0o1777;

export interface TaskDirPaths {
  root: string;
  local: string;
  secrets: string;
  tmp: string;
}

export interface TaskOwner {
  uid: number;
  gid: number;
}

/**
 * Makes one directory whose parent exists; one already there is fine (a
 * restored alloc). Cheaper than a recursive mkdir, which checks every
 * ancestor: this runs nine times for every alloc that starts.
 */
function ensureDir(path: string, mode = 0o777): void {
  try {
    mkdirSync(path, { mode });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

/**
 * Runs `use` on a descriptor of directory `path`, refusing a symlink in its
 * place. Tasks can write to alloc/ (and a root task can replace what is in
 * it), so a path there may have become a symlink to a host directory: a
 * chmod, chown or mount through it would change the host.
 */
function withDirectory<T>(path: string, use: (fd: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") throw new Error(`${path} is not a directory (a symlink or a file was put in its place)`);
    throw err;
  }
  try {
    return use(fd);
  } finally {
    closeSync(fd);
  }
}

/** Sets the mode (and owner) of directory `path` without following a symlink. */
function setDirectoryMode(path: string, mode: number, owner?: TaskOwner): void {
  withDirectory(path, (fd) => {
    fchmodSync(fd, mode);
    if (owner) fchownSync(fd, owner.uid, owner.gid);
  });
}

/**
 * Makes `allocRoot` a nosuid, nodev mount of its own (binding it on itself),
 * unless it already is one: what tasks write below it can then neither raise
 * anyone's privileges on the host nor open a device. Needs root; a mount made
 * in the agent's mount namespace (systemd's PrivateTmp and the like give it
 * one of its own) protects only processes in that namespace.
 */
export function protectAllocRoot(allocRoot: string, mountinfo = "/proc/self/mountinfo"): void {
  const path = resolve(allocRoot);
  mkdirSync(path, { recursive: true, mode: 0o711 });
  const own = parseMountinfo(readFileSync(mountinfo, "utf8")).findLast((entry) => entry.mountPoint === path);
  if (own?.options.includes("nosuid") && own.options.includes("nodev")) return;
  if (!own && mount(path, path, "", MS_BIND | MS_REC, "") !== 0) throw new Error(`cannot bind ${path} on itself to make it nosuid (errno ${errno()})`);
  if (mountSetattr(path, AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) !== 0) throw new Error(`cannot make ${path} nosuid and nodev (errno ${errno()})`);
}

/**
 * At agent stop: undoes protectAllocRoot's bind once no alloc dir is left,
 * so a data dir whose jobs were all purged is an ordinary directory again.
 * A file system the operator mounted there (not a bind) stays mounted.
 */
export function releaseAllocRoot(allocRoot: string, mountinfo = "/proc/self/mountinfo"): void {
  const path = resolve(allocRoot);
  const own = parseMountinfo(readFileSync(mountinfo, "utf8")).findLast((entry) => entry.mountPoint === path);
  if (!own || own.root === "/" || !existsSync(path) || readdirSync(path).length > 0) return;
  umount2(path, MNT_DETACH);
}

/**
 * A task's directories, each made from its root when read: one of these
 * lives per running task, and its paths are read while it sets up, not
 * after (issue 35: the agent's memory per task).
 */
class TaskDir implements TaskDirPaths {
  constructor(readonly root: string) {}

  get local(): string {
    return join(this.root, "local");
  }

  get secrets(): string {
    return join(this.root, "secrets");
  }

  get tmp(): string {
    return join(this.root, "tmp");
  }
}

/** The alloc's directories; those under its root are made when read, as a task's are (TaskDir). */
export class AllocDir {
  readonly path: string;

  constructor(allocRoot: string, readonly allocId: string) {
    if (!/^[0-9a-f-]{8,}$/.test(allocId)) throw new Error(`invalid alloc id "${allocId}"`);
    this.path = resolve(allocRoot, allocId);
  }

  /** alloc/, which every task of the alloc shares. */
  get shared(): string {
    return join(this.path, "alloc");
  }

  get logs(): string {
    return join(this.path, "alloc", "logs");
  }

  get data(): string {
    return join(this.path, "alloc", "data");
  }

  get tmp(): string {
    return join(this.path, "alloc", "tmp");
  }

  taskDir(task: string): TaskDirPaths {
    const problem = taskNameProblem(task);
    if (problem) throw new Error(`task name "${task}" cannot name a directory: it ${problem}`);
    return new TaskDir(join(this.path, task));
  }

  build(): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o711 });
    ensureDir(this.path, 0o755);
    for (const dir of [this.shared, this.logs, this.data, this.tmp]) {
      ensureDir(dir);
      setDirectoryMode(dir, SHARED_MODE);
    }
  }

  /**
   * Makes a task's directories, owned by `owner` when the task runs as another
   * user. The secrets dir becomes a tmpfs when `secretsTmpfs` is set and the
   * host allows mounting (root); otherwise a plain 0700 directory.
   */
  buildTask(task: string, options: { owner?: TaskOwner; secretsTmpfs: boolean }): TaskDirPaths {
    const paths = this.taskDir(task);
    ensureDir(paths.root, 0o755);
    for (const dir of [paths.local, paths.tmp]) {
      ensureDir(dir);
      setDirectoryMode(dir, 0o777, options.owner);
    }
    ensureDir(paths.secrets, 0o700);
    if (options.secretsTmpfs) this.mountSecrets(paths);
    setDirectoryMode(paths.secrets, 0o700, options.owner);
    return paths;
  }

  /** Mounts the secrets tmpfs unless one is there already (a restored alloc). */
  private mountSecrets(paths: TaskDirPaths): void {
    withDirectory(paths.secrets, (fd) => {
      // A mount point's device differs from its parent's (cheaper than reading mountinfo).
      if (fstatSync(fd).dev !== statSync(paths.root).dev) return;
      // Through the descriptor, so the mount lands on the directory just checked.
      const target = `/proc/self/fd/${fd}`;
      const code = mountRetryingEnoent(() => mount("tmpfs", target, "tmpfs", MS_NOEXEC | MS_NOSUID | MS_NODEV, `size=${SECRETS_TMPFS_SIZE},mode=0700`));
      if (code !== 0) throw new Error(`cannot mount the secrets tmpfs at ${paths.secrets}: ${sysError("mount", undefined, code).message}`);
    });
  }

  /**
   * Moves `previous`'s alloc/data here (ephemeral_disk sticky/migrate): a
   * rename on the same file system, a copy otherwise. The previous alloc keeps
   * nothing of it.
   */
  moveDataFrom(previous: AllocDir): void {
    const found = lstatSync(previous.data, { throwIfNoEntry: false });
    if (!found) return;
    if (!found.isDirectory()) throw new Error(`cannot migrate ${previous.data}: not a directory (a symlink or a file was put in its place)`);
    rmSync(this.data, { recursive: true, force: true });
    try {
      renameSync(previous.data, this.data);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
      cpSync(previous.data, this.data, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      rmSync(previous.data, { recursive: true, force: true });
    }
    setDirectoryMode(this.data, SHARED_MODE);
  }

  /**
   * Unmounts everything below the alloc dir (deepest first), then deletes it.
   * Refuses to delete while a mount remains, so a leftover bind mount can
   * never lead the deletion into host files.
   */
  async destroy(): Promise<void> {
    if (!existsSync(this.path)) return;
    // The mount table is read with the other allocs removed at the same time (a host with a
    // thousand tasks has a thousand secrets mounts to list), afresh only when a detach failed.
    const { failed } = await detachMountsBelow(this.path);
    const left = failed.length > 0 ? mountsUnder(this.path) : [];
    if (left.length > 0) throw new Error(`cannot remove ${this.path}: still mounted: ${left.join(", ")}`);
    // On the thread pool: an alloc's logs and files are many unlinks the agent's thread need not wait in.
    await rm(this.path, { recursive: true, force: true });
  }
}
