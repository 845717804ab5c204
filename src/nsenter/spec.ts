/**
 * The IsolationSpec: everything `drover nsenter` needs to build one task's
 * isolation, written by the executor as JSON to a file whose path is the
 * role's argument. Paths are checked here, before anything is mounted: every
 * path must be absolute and already normal (no ".", "..", "//" or trailing
 * "/"), so nothing in the spec can point outside where it says.
 *
 * ExecSpec is the smaller document for `drover nsenter --exec <pid>`: a
 * command to run inside a running task's namespaces.
 */
import { posix } from "node:path";
import * as v from "valibot";
import { CAPABILITY_NAMES, DEFAULT_EXEC_CAPABILITIES } from "../lib/capabilities.ts";
import { RLIMIT_NAMES } from "../lib/rlimits.ts";
import { FilteredSyscallSchema } from "../lib/syscall-filter.ts";
import { IsolationModeSchema } from "../lib/isolation-mode.ts";
import { sysctlNamespace } from "../lib/sysctls.ts";
import { isUnder, volumeTaskPath } from "../lib/volume-paths.ts";

/** The chroot an exec task gets: host path -> path inside the task (Nomad's default set). */
export const DEFAULT_CHROOT_ENV: Readonly<Record<string, string>> = {
  "/bin": "/bin",
  "/etc": "/etc",
  "/lib": "/lib",
  "/lib32": "/lib32",
  "/lib64": "/lib64",
  "/run/resolvconf": "/run/resolvconf",
  "/sbin": "/sbin",
  "/usr": "/usr",
};

/** Where a container's init (docker init) is bound, as Docker once bound docker-init. */
export const INIT_TASK_PATH = "/dev/init";

/** Where the role mounts the task's own directories; chroot_env may not mount on or under them. */
export const RESERVED_PATHS = ["/alloc", "/dev", "/local", "/proc", "/secrets", "/tmp"] as const;

function isNormalAbsolute(path: string): boolean {
  return path.startsWith("/") && !path.includes("\0") && posix.normalize(path) === path && (path === "/" || !path.endsWith("/"));
}

const PATH_MESSAGE = "must be an absolute path without '.', '..', '//' or a trailing '/'";
const AbsolutePath = v.pipe(v.string(), v.check(isNormalAbsolute, PATH_MESSAGE));
/** A host directory the role mounts from; "/" would expose the whole host. */
const HostDir = v.pipe(AbsolutePath, v.check((path) => path !== "/", "must not be /"));
const NoNul = v.pipe(v.string(), v.check((text) => !text.includes("\0"), "must not contain NUL"));

const Argv = v.pipe(v.array(NoNul), v.minLength(1, "must name a command"));
const Env = v.record(v.pipe(v.string(), v.regex(/^[^=\0]+$/, "variable names must be non-empty and contain no '=' or NUL")), NoNul);
/** A name or uid from the host's user database, or "uid:gid" as numbers (an image's user, resolved from its own files). */
const User = v.pipe(v.string(), v.regex(/^(?:[^:\0\s]+|\d+:\d+)$/, 'must be a user name, a uid, or "uid:gid"'));
const Capabilities = v.array(v.picklist(CAPABILITY_NAMES));
const Cgroups = v.array(HostDir);
/** Rules of the default syscall filter lifted for this task (the driver checked the operator allows them). */
const AllowSyscalls = v.array(FilteredSyscallSchema);

const RlimitValue = v.union([v.pipe(v.number(), v.integer(), v.minValue(0)), v.literal("unlimited")]);
const Rlimit = v.pipe(
  v.strictObject({ soft: RlimitValue, hard: RlimitValue }),
  v.check(({ soft, hard }) => hard === "unlimited" || (soft !== "unlimited" && soft <= hard), "soft must not exceed hard"),
);
const Rlimits = v.record(v.picklist(RLIMIT_NAMES), Rlimit);

const ChrootEnv = v.pipe(
  v.record(HostDir, AbsolutePath),
  v.check(
    (entries) => Object.values(entries).every((inside) => inside !== "/" && !RESERVED_PATHS.some((reserved) => isUnder(inside, reserved) || isUnder(reserved, inside))),
    `paths inside must not be /, nor on, under or above ${RESERVED_PATHS.join(", ")}`,
  ),
);

/** A device node the task gets: the host's node bound at `taskPath`, a path under /dev. */
export const DeviceNodeSchema = v.strictObject({
  taskPath: v.pipe(AbsolutePath, v.check((path) => isUnder(path, "/dev") && path !== "/dev", "must be a path under /dev")),
  hostPath: HostDir,
  /** What the devices cgroup allows on it: "r", "w", "m" (read, write, mknod). */
  permissions: v.pipe(v.string(), v.regex(/^[rwm]{1,3}$/, 'must be letters of "rwm"')),
});
export type DeviceNode = v.InferOutput<typeof DeviceNodeSchema>;

/** A host path bound into the task's root (a device plugin's mount). */
export const BindMountSchema = v.strictObject({
  taskPath: v.pipe(
    AbsolutePath,
    v.check((inside) => inside !== "/" && !RESERVED_PATHS.some((reserved) => isUnder(inside, reserved) || isUnder(reserved, inside)), `must not be /, nor on, under or above ${RESERVED_PATHS.join(", ")}`),
  ),
  hostPath: HostDir,
  readOnly: v.boolean(),
});
export type BindMount = v.InferOutput<typeof BindMountSchema>;

/** A host volume (volume_mount) bound into the task's root, after its own dirs: it may land below /local, /tmp or /alloc. */
export const VolumeBindSchema = v.strictObject({
  taskPath: v.pipe(
    AbsolutePath,
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const place = volumeTaskPath(dataset.value);
      if ("problem" in place) addIssue({ message: place.problem });
    }),
  ),
  hostPath: HostDir,
  readOnly: v.boolean(),
});
export type VolumeBind = v.InferOutput<typeof VolumeBindSchema>;

/**
 * An image's root (the docker driver): an overlay of the image's unpacked
 * layers (read-only, shared by every task of the image) under the task's own
 * upper and work dirs, in place of the chroot of host dirs.
 */
export const ImageRootSchema = v.strictObject({
  /** Bottom layer first, as the image's manifest lists them. */
  layers: v.pipe(v.array(HostDir), v.minLength(1, "must name a layer")),
  upperDir: HostDir,
  workDir: HostDir,
});
export type ImageRoot = v.InferOutput<typeof ImageRootSchema>;

export const IsolationSpecSchema = v.strictObject({
  /** The task's command; argv[0] without a "/" is looked up in env.PATH inside the chroot. */
  argv: Argv,
  /** The task's whole environment; the role adds nothing and drops BUN_* variables. */
  env: Env,
  /** Working directory inside the chroot. */
  cwd: v.optional(AbsolutePath, "/"),
  /** User name (or uid) from the host's user database; its primary group is used. */
  user: v.optional(User, "nobody"),
  /** The task's hostname in its own UTS namespace (Nomad: the alloc's short id). */
  hostname: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$/, "must be 1-63 letters, digits, '.' or '-'")),
  /** Host path of <alloc>/<task>: its local/, secrets/ and tmp/ become /local, /secrets, /tmp. */
  taskDir: HostDir,
  /** Host path of <alloc>/alloc, the directory the alloc's tasks share, mounted read-write at /alloc. */
  allocDir: HostDir,
  /** Host path -> path inside, bound read-only (Nomad's chroot_env). */
  chrootEnv: v.optional(ChrootEnv, () => ({ ...DEFAULT_CHROOT_ENV })),
  /** "host" shares the host's network (Nomad's default); "none" gives a namespace with only loopback. */
  network: v.optional(v.picklist(["host", "none"]), "host"),
  /** The task's own /etc/hosts and /etc/resolv.conf (drivers/etc-files.ts), bound read-only over the root's. */
  etcFiles: v.optional(v.strictObject({ hosts: v.optional(AbsolutePath), resolvConf: v.optional(AbsolutePath) }), () => ({})),
  /** A network namespace to join instead (group bridge mode: the alloc's, /var/run/netns/<alloc-id>). */
  netns: v.optional(AbsolutePath),
  /**
   * cgroup directories (one per v1 hierarchy, or the v2 one) the role joins
   * before anything else; the way to place an isolated task (not spawn's
   * cgroup option: see launch.ts).
   */
  cgroups: v.optional(Cgroups, () => []),
  oomScoreAdj: v.optional(v.pipe(v.number(), v.integer(), v.minValue(-1000), v.maxValue(1000))),
  rlimits: v.optional(Rlimits, () => ({})),
  /** Capabilities a root task keeps (bounding set for any user). */
  capabilities: v.optional(Capabilities, () => [...DEFAULT_EXEC_CAPABILITIES]),
  /** Device nodes from the task's device plugins, bound into its /dev. */
  devices: v.optional(v.array(DeviceNodeSchema), () => []),
  /** Host paths from the task's device plugins, bound into its root after chroot_env. */
  mounts: v.optional(v.array(BindMountSchema), () => []),
  /** Host volumes of the task's volume_mount blocks. */
  volumes: v.optional(v.array(VolumeBindSchema), () => []),
  allowSyscalls: v.optional(AllowSyscalls, () => []),
  /** "host": the task stays in the host's PID namespace (its /proc shows the host's processes); see launch.ts. */
  pidMode: v.optional(IsolationModeSchema, "private"),
  /** "host": the task keeps the host's IPC namespace. */
  ipcMode: v.optional(IsolationModeSchema, "private"),
  /** The task's root is this image's (chrootEnv is then unused). */
  image: v.optional(ImageRootSchema),
  /** An image's root read-only too (docker readonly_rootfs); a chroot's always is. */
  readOnlyRoot: v.optional(v.boolean(), false),
  /** Bytes of the /dev/shm tmpfs (docker shm_size); Docker's 64 MiB when absent. */
  shmBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Namespaced sysctls set in the task's own namespaces (docker sysctl): key -> value. */
  sysctls: v.optional(v.record(v.pipe(v.string(), v.check((key) => sysctlNamespace(key) !== null, "must be a namespaced sysctl")), NoNul), () => ({})),
  /** A static init on the host (tini), bound read-only at /dev/init; argv then starts with it (docker init). */
  init: v.optional(HostDir),
  /** false: no syscall filter (docker privileged, where the operator allows it). */
  syscallFilter: v.optional(v.boolean(), true),
});
export type IsolationSpec = v.InferOutput<typeof IsolationSpecSchema>;
/** The spec as the executor writes it: defaults may be left out. */
export type IsolationSpecInput = v.InferInput<typeof IsolationSpecSchema>;

export const ExecSpecSchema = v.strictObject({
  argv: Argv,
  env: Env,
  cwd: v.optional(AbsolutePath, "/"),
  user: v.optional(User, "nobody"),
  cgroups: v.optional(Cgroups, () => []),
  rlimits: v.optional(Rlimits, () => ({})),
  capabilities: v.optional(Capabilities, () => [...DEFAULT_EXEC_CAPABILITIES]),
  /** fds 0-2 are one terminal (an interactive session): the command takes it as its controlling terminal, owned by its user. */
  tty: v.optional(v.boolean(), false),
  /** The task's own lifted rules: a command run inside it gets the same filter. */
  allowSyscalls: v.optional(AllowSyscalls, () => []),
  /** false: the task runs without a filter (docker privileged), and so does the command. */
  syscallFilter: v.optional(v.boolean(), true),
});
export type ExecSpec = v.InferOutput<typeof ExecSpecSchema>;
export type ExecSpecInput = v.InferInput<typeof ExecSpecSchema>;
