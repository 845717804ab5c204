/**
 * The `config` block of the drivers drover has (raw_exec, exec, docker): a job
 * keeps any driver's config as written; this reads the one these drivers
 * take. The server checks it on register (a job for a driver drover has
 * should not wait for a node to say its config is wrong) and the client
 * again before a start (an allocation may come from elsewhere).
 */
import * as v from "valibot";
import { ALL_CAPABILITIES, CAPABILITY_NAMES, normalizeCapability } from "../lib/capabilities.ts";
import { IsolationModeSchema } from "../lib/isolation-mode.ts";
import { parseUlimit, RLIMIT_NAMES } from "../lib/rlimits.ts";
import { SYSCTL_RULE, sysctlNamespace } from "../lib/sysctls.ts";
import { FilteredSyscallSchema } from "../lib/syscall-filter.ts";
import { DRIVERS, type DriverName } from "./job.ts";

/**
 * `${...}` stays literal: the task runner resolves it. The keys of both
 * drivers; each driver refuses the ones it does not take (raw_exec:
 * syscall_add) and checks them against the client's settings when it starts
 * the task.
 */
/** A capability as Nomad's job files may write it ("CAP_NET_RAW", "net_raw", "all"). */
const CapabilitySchema = v.pipe(
  v.string(),
  v.transform(normalizeCapability),
  v.picklist([...CAPABILITY_NAMES, ALL_CAPABILITIES], 'must name a Linux capability or "all"'),
);

export const ExecDriverConfigSchema = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  /** HCL2 keeps `args = ["-n", 42]` as written; the driver reads each as text, as Nomad's does. */
  args: v.optional(v.array(v.pipe(v.union([v.string(), v.number(), v.boolean()]), v.transform(String))), []),
  /** Nomad's (docker driver's) field: most processes and threads the task may have at once; at most the client's pids_limit. */
  pids_limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, "must be at least 1"))),
  /** exec: calls of the default syscall filter the task may make; each must be in the plugin's allow_syscalls. */
  syscall_add: v.optional(v.array(FilteredSyscallSchema)),
  /** exec: "host" shares the host's PID namespace (the task sees the host's processes); the plugin's default_pid_mode when unset. */
  pid_mode: v.optional(IsolationModeSchema),
  /** exec: "host" shares the host's IPC namespace (System V IPC, POSIX queues); the plugin's default_ipc_mode when unset. */
  ipc_mode: v.optional(IsolationModeSchema),
  /** exec: capabilities added to the default set; each must be in the plugin's allow_caps. */
  cap_add: v.optional(v.array(CapabilitySchema)),
  /** exec: capabilities taken from the default set. */
  cap_drop: v.optional(v.array(CapabilitySchema)),
});
export type ExecDriverConfig = v.InferOutput<typeof ExecDriverConfigSchema>;

/** An HCL block (`auth { ... }`) arrives as a list of one object; `auth = { ... }` as the object. */
function block<T extends v.GenericSchema>(schema: T) {
  // Unwrapped first, so an issue inside names its own field rather than failing a union.
  return v.pipe(
    v.unknown(),
    v.transform((value) => (Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value)),
    schema,
  );
}

const DurationText = v.pipe(v.string(), v.regex(/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/, 'must be a duration such as "30s" or "5m"'));

/** HCL text or number, read as text (Nomad's map(string)). */
const Text = v.pipe(v.union([v.string(), v.number()]), v.transform(String));

/** docker `ulimit { nofile = "1024:2048" }`: rlimit name -> "n" or "soft:hard". */
const UlimitSchema = v.record(
  v.picklist(RLIMIT_NAMES, `must name a resource limit (${RLIMIT_NAMES.join(", ")})`),
  v.pipe(
    Text,
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const limit = parseUlimit(dataset.value);
      if ("problem" in limit) {
        addIssue({ message: limit.problem });
        return NEVER;
      }
      return limit;
    }),
  ),
);

/** docker `sysctl { "net.core.somaxconn" = "1024" }`: namespaced keys only, as Docker allows. */
const SysctlSchema = v.record(v.pipe(v.string(), v.check((key) => sysctlNamespace(key) !== null, SYSCTL_RULE)), Text);

/** The docker driver's registry credentials (Nomad's `auth` block). */
export const DockerAuthSchema = v.strictObject({
  username: v.string(),
  password: v.string(),
  /** Accepted as Nomad documents it; the image's registry is the one asked. */
  server_address: v.optional(v.string()),
  email: v.optional(v.string()),
});

const Texts = v.array(v.pipe(v.string(), v.minLength(1, "must not be empty")));

/** The docker driver's network keys (drivers/network.ts, drivers/etc-files.ts; docs/docker-driver.md#networking). */
const DockerNetworkKeys = {
  /** Absent: the group's network (bridge: the alloc's namespace). */
  network_mode: v.optional(v.picklist(["host", "none", "bridge"], 'must be "host", "none" or "bridge" (the group\'s bridge network)')),
  hostname: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(63, "must be at most 63 characters"))),
  extra_hosts: v.optional(v.array(v.pipe(v.string(), v.regex(/^[^:\s]+:\S+$/, 'must be "name:address"')))),
  dns_servers: v.optional(Texts),
  dns_search_domains: v.optional(Texts),
  dns_options: v.optional(Texts),
};

/**
 * The docker driver's keys drover serves (docs/docker-driver.md). Any other
 * key of Nomad's docker driver (mounts, security_opt, devices, ...) is
 * refused by name as an unknown field.
 */
export const DockerDriverConfigSchema = v.strictObject({
  image: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  /** `docker save` tarball in the task dir (after artifacts), loaded instead of pulled. */
  load: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  command: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  args: ExecDriverConfigSchema.entries.args,
  entrypoint: v.optional(v.array(v.string())),
  work_dir: v.optional(v.pipe(v.string(), v.startsWith("/", "must be an absolute path"))),
  /** Group port labels; on the host's network the task listens on the host's ports themselves. */
  ports: v.optional(v.array(v.string())),
  /** "host:container[:ro]", the host path relative to the task dir and within the alloc dir. */
  volumes: v.optional(v.array(v.pipe(v.string(), v.regex(/^[^:]+:\/[^:]*(:(ro|rw))?$/, 'must be "host_path:/container_path" with an optional ":ro"')))),
  auth: v.optional(block(DockerAuthSchema)),
  auth_soft_fail: v.optional(v.boolean()),
  force_pull: v.optional(v.boolean(), false),
  image_pull_timeout: v.optional(DurationText, "5m"),
  /** Accepted and ignored: drover has no container labels. */
  labels: v.optional(v.unknown()),
  ...DockerNetworkKeys,
  pids_limit: ExecDriverConfigSchema.entries.pids_limit,
  // Privileges and limits, as Docker applies them (drivers/docker/security.ts).
  cap_add: ExecDriverConfigSchema.entries.cap_add,
  cap_drop: ExecDriverConfigSchema.entries.cap_drop,
  privileged: v.optional(v.boolean(), false),
  readonly_rootfs: v.optional(v.boolean(), false),
  init: v.optional(v.boolean(), false),
  /** Bytes of /dev/shm. */
  shm_size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, "must be at least 1 (bytes)"))),
  ulimit: v.optional(block(UlimitSchema)),
  sysctl: v.optional(block(SysctlSchema)),
});
export type DockerDriverConfig = v.InferOutput<typeof DockerDriverConfigSchema>;

export function isKnownDriver(driver: string): driver is DriverName {
  return (DRIVERS as readonly string[]).includes(driver);
}

/** The `config` schema of a driver drover has. */
export function driverConfigSchema(driver: DriverName): typeof ExecDriverConfigSchema | typeof DockerDriverConfigSchema {
  return driver === "docker" ? DockerDriverConfigSchema : ExecDriverConfigSchema;
}

/** A task's command and args (docker: optional, the image's), and the rest of its `config` for the driver. */
export function splitDriverConfig(driver: DriverName, config: unknown): { command?: string; args: string[]; rest: Record<string, unknown> } {
  const { command, args, ...rest } = v.parse(driverConfigSchema(driver), config) as { command?: string; args: string[] };
  return { ...(command === undefined ? {} : { command }), args, rest };
}
