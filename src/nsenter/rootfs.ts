/**
 * The task's filesystem, built inside its own mount namespace, so every mount
 * here vanishes with the task and the host's mount table never changes.
 *
 *   /                 tmpfs mounted over the task dir (in this namespace only); read-only once built
 *   /bin /etc /usr .. chroot_env: read-only, nosuid, nodev binds; a host symlink mapped to
 *                     itself (/bin -> usr/bin) is copied as the same symlink. The host's
 *                     own secrets that come in with them (/etc/shadow, SSH host keys, ...:
 *                     HOST_SECRETS) are masked: /dev/null over a file, an empty tmpfs over a dir
 *   /local /tmp       the task dir's local/ and tmp/: read-write, nosuid, nodev
 *   /secrets          tmpfs, 0700, owned by the task user, noexec, seeded from the task dir's
 *                     secrets/ (bound instead when the host already mounted something there)
 *   /alloc            the alloc's shared dir: read-write, nosuid, nodev; its logs/, data/
 *                     and tmp/ are mount points too, so the task cannot swap them
 *   /dev              read-only tmpfs: null zero full random urandom tty bound from the host,
 *                     a private devpts at /dev/pts, tmpfs /dev/shm (shm_size), the fd symlinks, the
 *                     host's static init at /dev/init (docker init), and the
 *                     device nodes of the task's devices (/dev/nvidia0, ...) bound from the host
 *   plugin mounts     host paths a device plugin asks for, bound after chroot_env
 *   host volumes      volume_mount binds, after the task's own dirs (one may land below
 *                     /local, /tmp or /alloc): nosuid, nodev, read-only when asked, placed
 *                     by a walk that never follows a symlink (runtime/mounts.ts)
 *   /proc             a fresh proc of the task's PID namespace; kcore and the like masked,
 *                     sys, sysrq-trigger and the like read-only
 *
 * Then pivot_root into it and detach the old root. Writable mounts are all
 * nodev, so the mknod capability cannot make a usable device node.
 *
 * Only sync fs calls are used here: they run on this thread, which is the one
 * in the new mount namespace (Bun's pool threads are not).
 */
import { closeSync, constants, cpSync, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  AT_RECURSIVE,
  chdir,
  chroot,
  errno,
  mount,
  MOUNT_ATTR_NODEV,
  MOUNT_ATTR_NOEXEC,
  MOUNT_ATTR_NOSUID,
  MOUNT_ATTR_RDONLY,
  mountSetattr,
  MNT_DETACH,
  MS_BIND,
  MS_MOVE,
  MS_NODEV,
  MS_NOEXEC,
  MS_NOSUID,
  MS_PRIVATE,
  MS_REC,
  pivotRoot,
  umount2,
} from "../runtime/libc.ts";
import { bindBeneath } from "../runtime/mounts.ts";
import { IsolationError, must } from "./errors.ts";
import type { TaskIdentity } from "./identity.ts";
import { mountImage } from "./overlay.ts";
import { requireDeviceNode } from "./resources.ts";
import { type BindMount, type DeviceNode, type ImageRoot, INIT_TASK_PATH, type VolumeBind } from "./spec.ts";

/** The root holds only mount points and symlinks. */
const ROOT_TMPFS_OPTIONS = "mode=0755,size=1m";
/** Nomad's secrets dir is a 1 MiB tmpfs. */
const SECRETS_TMPFS_BYTES = 1 << 20;
/** /dev holds device mount points and symlinks only. */
const DEV_TMPFS_OPTIONS = "mode=0755,size=64k";
/** Docker's and Nomad's default /dev/shm size. */
const DEFAULT_SHM_BYTES = 64 << 20;

const DEVICES = ["null", "zero", "full", "random", "urandom", "tty"] as const;
const DEV_SYMLINKS: Readonly<Record<string, string>> = {
  fd: "/proc/self/fd",
  stdin: "/proc/self/fd/0",
  stdout: "/proc/self/fd/1",
  stderr: "/proc/self/fd/2",
  ptmx: "pts/ptmx",
};
/** runc's default masked and read-only /proc paths: kernel memory, keys, timers, and knobs a root task could turn. */
const PROC_MASKED = ["acpi", "asound", "kcore", "keys", "latency_stats", "sched_debug", "scsi", "timer_list", "timer_stats"];
const PROC_READ_ONLY = ["bus", "fs", "irq", "sys", "sysrq-trigger"];

/**
 * Host files no task needs and a root task could otherwise read through the
 * chroot's binds: password hashes, the host's private keys (SSH, TLS,
 * Kerberos), and the agents' own configuration (tokens, TLS keys). Each is a
 * path, or a directory and a pattern for its entries. The rest of /etc stays
 * (passwd, group, hosts, resolv.conf, nsswitch.conf, ssl/certs, localtime, ...).
 */
export const HOST_SECRETS: readonly (string | { dir: string; names: RegExp })[] = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/security/opasswd",
  { dir: "/etc/ssh", names: /^ssh_host_.*_key$/ },
  "/etc/ssl/private",
  "/etc/krb5.keytab",
  "/etc/drover.d",
  "/etc/nomad.d",
];

/** Host files an image's root gets bound over its own. */
const HOST_NETWORK_FILES = ["/etc/resolv.conf", "/etc/hosts"] as const;

/** The alloc dir's own subdirectories (AllocDir.build makes them). */
const ALLOC_SUBDIRS = ["data", "logs", "tmp"] as const;

const RW_ATTRS = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
const RO_ATTRS = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

export interface RootfsSpec {
  taskDir: string;
  /** An image's layers as the root (docker), in place of the tmpfs and chroot_env. */
  image?: ImageRoot | undefined;
  etcFiles: { hosts?: string | undefined; resolvConf?: string | undefined };
  /** An image's root read-only too (a chroot's always is). */
  readOnlyRoot?: boolean | undefined;
  /** Bytes of /dev/shm. */
  shmBytes?: number | undefined;
  /** A static init on the host, bound at INIT_TASK_PATH. */
  init?: string | undefined;
  allocDir: string;
  chrootEnv: Readonly<Record<string, string>>;
  devices: readonly DeviceNode[];
  mounts: readonly BindMount[];
  volumes: readonly VolumeBind[];
}

/** Builds the task's root over `spec.taskDir` and makes it this thread's root. */
export function buildRootfs(spec: RootfsSpec, owner: TaskIdentity): void {
  must(mount("none", "/", "", MS_REC | MS_PRIVATE, ""), "make every mount private");
  // The task dir's own children stay reachable through this descriptor once the tmpfs hides them.
  const taskDir = openDirectory(spec.taskDir, "task dir");
  try {
    const hostChild = (name: string) => `/proc/self/fd/${taskDir}/${name}`;
    const root = new Root(spec.taskDir);
    if (spec.image) {
      mountImage(root.path, spec.image);
      mountHostNetworkFiles(root, spec.etcFiles);
    } else {
      must(mount("tmpfs", root.path, "tmpfs", MS_NOSUID | MS_NODEV, ROOT_TMPFS_OPTIONS), `mount the root tmpfs on ${spec.taskDir}`);
      mountChrootEnv(root, spec.chrootEnv);
      maskHostSecrets(root, spec.chrootEnv);
    }
    // Files the driver wrote in the task dir are reached through its descriptor: the root now covers it.
    const reach = (path: string | undefined) => (path?.startsWith(`${spec.taskDir}/`) ? hostChild(path.slice(spec.taskDir.length + 1)) : path);
    mountEtcFiles(root, { hosts: reach(spec.etcFiles.hosts), resolvConf: reach(spec.etcFiles.resolvConf) });
    mountPluginPaths(root, spec.mounts);
    bind(requireDirectory(hostChild("local"), `${spec.taskDir}/local`), root.mountPoint("/local", "dir"), RW_ATTRS);
    // An image keeps its own /tmp, as under Docker.
    if (!spec.image) bind(requireDirectory(hostChild("tmp"), `${spec.taskDir}/tmp`), root.mountPoint("/tmp", "dir"), RW_ATTRS);
    mountAllocDir(root, spec.allocDir);
    mountVolumes(root, spec.volumes);
    mountSecrets(root, hostChild("secrets"), fstatSync(taskDir).dev, owner);
    mountDev(root, spec.devices, spec.shmBytes ?? DEFAULT_SHM_BYTES, spec.init);
    mountProc(root);
    // An image's root is writable, into the task's own upper dir, unless readonly_rootfs.
    if (!spec.image || spec.readOnlyRoot) must(mountSetattr(root.path, 0, RO_ATTRS), "make the root read-only");
  } finally {
    closeSync(taskDir);
  }
  enterRoot(spec.taskDir);
}

/**
 * The new root while it is built. Paths inside it are created component by
 * component, refusing symlinks: until pivot_root an absolute symlink here
 * would resolve on the host.
 */
class Root {
  /** Paths inside already used as mount points; nothing is created under them. */
  private readonly mounted: string[] = [];
  constructor(readonly path: string) {}

  /** Creates (if needed) and returns the host-side path of mount point `inside`. */
  mountPoint(inside: string, kind: "dir" | "file"): string {
    const path = this.create(inside, kind);
    this.mounted.push(inside);
    return path;
  }

  symlink(inside: string, text: string): void {
    const parent = dirname(inside);
    symlinkSync(text, join(parent === "/" ? this.path : this.create(parent, "dir"), inside.slice(parent.length)));
  }

  private create(inside: string, kind: "dir" | "file"): string {
    const parts = inside.split("/").filter(Boolean);
    let current = this.path;
    parts.forEach((part, index) => {
      current = join(current, part);
      const soFar = `/${parts.slice(0, index + 1).join("/")}`;
      const existing = lstatOrNull(current);
      if (existing?.isSymbolicLink()) throw new IsolationError(`mount point ${inside}: ${soFar} is a symlink inside the chroot`);
      if (existing) return;
      const under = this.mounted.find((mounted) => soFar.startsWith(`${mounted}/`));
      if (under) throw new IsolationError(`mount point ${inside}: ${soFar} does not exist in ${under}, which is already mounted read-only`);
      if (index === parts.length - 1 && kind === "file") writeFileSync(current, "", { mode: 0o644 });
      else mkdirSync(current, { mode: 0o755 });
    });
    return current;
  }
}

/** The host's name resolution, read-only, as Docker gives a container on the host's network; not the files the task has its own of. */
function mountHostNetworkFiles(root: Root, own: RootfsSpec["etcFiles"]): void {
  for (const path of HOST_NETWORK_FILES) {
    if (!statOrNull(path)?.isFile() || (path === "/etc/hosts" ? own.hosts : own.resolvConf)) continue;
    let target: string;
    try {
      target = root.mountPoint(path, "file");
    } catch (err) {
      // The image has a symlink on the way (its own resolver setup): left as the image made it.
      if (err instanceof IsolationError) continue;
      throw err;
    }
    bind(path, target, RO_ATTRS);
  }
}

/** The task's own /etc/hosts and /etc/resolv.conf (hostname, extra_hosts, dns), read-only. */
function mountEtcFiles(root: Root, files: RootfsSpec["etcFiles"]): void {
  if (files.hosts) bind(files.hosts, root.mountPoint("/etc/hosts", "file"), RO_ATTRS);
  if (files.resolvConf) bind(files.resolvConf, root.mountPoint("/etc/resolv.conf", "file"), RO_ATTRS);
}

function mountChrootEnv(root: Root, chrootEnv: Readonly<Record<string, string>>): void {
  // Shallow paths first, so a nested entry lands inside its parent's bind.
  const entries = Object.entries(chrootEnv).sort(([, a], [, b]) => a.split("/").length - b.split("/").length || a.localeCompare(b));
  for (const [source, inside] of entries) {
    const link = lstatOrNull(source);
    if (!link) continue;
    if (link.isSymbolicLink() && source === inside) {
      root.symlink(inside, readlinkSync(source));
      continue;
    }
    const target = statOrNull(source);
    if (!target) continue;
    bind(source, root.mountPoint(inside, target.isDirectory() ? "dir" : "file"), RO_ATTRS, true);
  }
}

/** Masks each of HOST_SECRETS that a chroot_env bind brought into the root. */
function maskHostSecrets(root: Root, chrootEnv: Readonly<Record<string, string>>): void {
  const hostPaths = HOST_SECRETS.flatMap((secret) => {
    if (typeof secret === "string") return [secret];
    const names = readdirOrEmpty(secret.dir).filter((name) => secret.names.test(name));
    return names.map((name) => `${secret.dir}/${name}`);
  });
  for (const hostPath of hostPaths) {
    for (const [source, inside] of Object.entries(chrootEnv)) {
      if (hostPath !== source && !hostPath.startsWith(`${source}/`)) continue;
      const target = join(root.path, inside, hostPath.slice(source.length));
      // Only what is really there: a symlink would be followed by the mount, to wherever it points.
      const stat = lstatOrNull(target);
      if (!stat || stat.isSymbolicLink()) continue;
      if (stat.isDirectory()) must(mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0555"), `mask ${hostPath}`);
      else must(mount("/dev/null", target, "", MS_BIND, ""), `mask ${hostPath}`);
      must(mountSetattr(target, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC), `make the mask of ${hostPath} read-only`);
    }
  }
}

function readdirOrEmpty(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/**
 * The alloc's shared dir, and each of its own subdirectories bound on itself:
 * a mount point cannot be renamed or removed, so even a root task cannot put
 * a symlink in place of logs/, data/ or tmp/, which the agent, executor and
 * logmon keep using on the host, where the symlink would lead them out.
 */
function mountAllocDir(root: Root, allocDir: string): void {
  const target = root.mountPoint("/alloc", "dir");
  bind(requireDirectory(allocDir, "alloc dir"), target, RW_ATTRS);
  for (const name of ALLOC_SUBDIRS) {
    const pinned = join(target, name);
    bind(requireDirectory(pinned, `alloc dir's ${name}/`), pinned, RW_ATTRS);
  }
}

function mountSecrets(root: Root, hostSecrets: string, taskDirDevice: number, owner: TaskIdentity): void {
  const target = root.mountPoint("/secrets", "dir");
  const existing = lstatOrNull(hostSecrets);
  if (existing?.isSymbolicLink()) throw new IsolationError("task dir's secrets/ is a symlink");
  // Something the host mounted there (a tmpfs the agent writes into) is shared as it is.
  if (existing?.isDirectory() && existing.dev !== taskDirDevice) {
    bind(hostSecrets, target, RW_ATTRS | MOUNT_ATTR_NOEXEC);
    return;
  }
  const options = `mode=0700,uid=${owner.uid},gid=${owner.gid},size=${SECRETS_TMPFS_BYTES}`;
  must(mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options), "mount the secrets tmpfs");
  if (existing?.isDirectory()) cpSync(hostSecrets, target, { recursive: true, verbatimSymlinks: true });
}

/** A device plugin's host paths; a path the host lacks is an error, since the plugin promised it. */
function mountPluginPaths(root: Root, mounts: readonly BindMount[]): void {
  for (const { hostPath, taskPath, readOnly } of mounts) {
    const source = statOrNull(hostPath);
    if (!source) throw new IsolationError(`device mount ${hostPath} does not exist on the host`);
    bind(hostPath, root.mountPoint(taskPath, source.isDirectory() ? "dir" : "file"), readOnly ? RO_ATTRS : RW_ATTRS, true);
  }
}

/** Host volumes, shallow first, so one inside another lands in its bind. */
function mountVolumes(root: Root, volumes: readonly VolumeBind[]): void {
  const ordered = [...volumes].sort((a, b) => a.taskPath.split("/").length - b.taskPath.split("/").length);
  for (const { hostPath, taskPath, readOnly } of ordered) {
    try {
      bindBeneath(hostPath, root.path, taskPath.slice(1), { readOnly });
    } catch (err) {
      throw new IsolationError(`host volume at ${taskPath}: ${(err as Error).message}`);
    }
  }
}

/** Binds host device nodes into the /dev tmpfs (which, unlike every other writable mount, allows devices). */
function bindDeviceNodes(dev: string, devices: readonly DeviceNode[]): void {
  for (const { hostPath, taskPath } of devices) {
    requireDeviceNode(hostPath);
    const target = join(dev, taskPath.slice("/dev/".length));
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, "", { mode: 0o666 });
    must(mount(hostPath, target, "", MS_BIND, ""), `bind device ${hostPath}`);
  }
}

function mountDev(root: Root, devices: readonly DeviceNode[], shmBytes: number, init: string | undefined): void {
  const dev = root.mountPoint("/dev", "dir");
  must(mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, DEV_TMPFS_OPTIONS), "mount the /dev tmpfs");
  for (const device of DEVICES) {
    if (!existsSync(`/dev/${device}`)) continue;
    const target = join(dev, device);
    writeFileSync(target, "", { mode: 0o666 });
    must(mount(`/dev/${device}`, target, "", MS_BIND, ""), `bind /dev/${device}`);
  }
  mkdirSync(join(dev, "pts"), { mode: 0o755 });
  must(mount("devpts", join(dev, "pts"), "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"), "mount /dev/pts");
  mkdirSync(join(dev, "shm"), { mode: 0o1777 });
  must(mount("shm", join(dev, "shm"), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, `mode=1777,size=${shmBytes}`), "mount /dev/shm");
  for (const [name, text] of Object.entries(DEV_SYMLINKS)) symlinkSync(text, join(dev, name));
  bindDeviceNodes(dev, devices);
  if (init) {
    const target = join(dev, INIT_TASK_PATH.slice("/dev/".length));
    writeFileSync(target, "", { mode: 0o755 });
    // Executable, unlike the rest of /dev: its own bind keeps the host file's exec.
    bind(init, target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  }
  must(mountSetattr(dev, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC), "make /dev read-only");
}

function mountProc(root: Root): void {
  const proc = root.mountPoint("/proc", "dir");
  must(mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, ""), "mount /proc");
  for (const name of PROC_MASKED) {
    const path = join(proc, name);
    const stat = lstatOrNull(path);
    if (!stat) continue;
    if (stat.isDirectory()) must(mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0555"), `mask /proc/${name}`);
    else must(mount(join(root.path, "dev/null"), path, "", MS_BIND, ""), `mask /proc/${name}`);
  }
  for (const name of PROC_READ_ONLY) {
    const path = join(proc, name);
    if (lstatOrNull(path)) bind(path, path, RO_ATTRS | MOUNT_ATTR_NOEXEC, true);
  }
}

/** Binds `source` on `target` and sets `attrs` on the new mount (and its submounts when recursive). */
function bind(source: string, target: string, attrs: number, recursive = false): void {
  must(mount(source, target, "", MS_BIND | (recursive ? MS_REC : 0), ""), `bind ${source} on ${target}`);
  must(mountSetattr(target, recursive ? AT_RECURSIVE : 0, attrs), `set mount attributes on ${target}`);
}

/**
 * pivot_root into `root` and detach the host's root from this namespace. On a
 * root that cannot be pivoted (an initramfs), move the root mount and chroot.
 */
function enterRoot(root: string): void {
  const EINVAL = 22;
  must(chdir(root), `chdir ${root}`);
  if (pivotRoot(".", ".") === 0) {
    must(umount2(".", MNT_DETACH), "detach the host's root");
  } else {
    if (errno() !== EINVAL) must(-1, "pivot_root");
    must(mount(".", "/", "", MS_MOVE, ""), "move the new root over /");
    must(chroot("."), "chroot");
  }
  must(chdir("/"), "chdir /");
}

function openDirectory(path: string, what: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new IsolationError(`${what} ${path}: ${(err as Error).message}`);
  }
}

/** `path` if it is a directory and not a symlink; a planted symlink is refused, never followed. */
function requireDirectory(path: string, what: string): string {
  const stat = lstatOrNull(path);
  if (!stat) throw new IsolationError(`${what} does not exist`);
  if (stat.isSymbolicLink()) throw new IsolationError(`${what} is a symlink`);
  if (!stat.isDirectory()) throw new IsolationError(`${what} is not a directory`);
  return path;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
