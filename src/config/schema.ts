/**
 * The agent configuration: Nomad's agent config keys where Nomad has them
 * (https://developer.hashicorp.com/nomad/docs/configuration), drover's own
 * only where Nomad has none. Every key is optional in a file; the defaults
 * here are what an operator gets without saying anything.
 */
import * as v from "valibot";
import { DEFAULT_TASKS_PER_EXECUTOR } from "../lib/executor-sharing.ts";
import { parseDuration } from "../lib/duration.ts";
import { LOG_LEVELS, type LogLevel } from "../lib/log-levels.ts";
import { CAPABILITY_NAMES } from "../lib/capabilities.ts";
import { FilteredSyscallSchema } from "../lib/syscall-filter.ts";
import { IsolationModeSchema } from "../lib/isolation-mode.ts";
import { parsePortSpec } from "../lib/port-spec.ts";
import { DEFAULT_BRIDGE_NAME, DEFAULT_BRIDGE_SUBNET, DEFAULT_CNI_PATH } from "../lib/bridge-network.ts";

export const LogLevelSchema = v.pipe(
  v.string(),
  v.transform((level) => level.toUpperCase()),
  v.picklist(Object.keys(LOG_LEVELS) as LogLevel[], `expected one of ${Object.keys(LOG_LEVELS).join(", ")}`),
);

const Port = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535));
const Duration = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return parseDuration(dataset.value);
    } catch (err) {
      addIssue({ message: (err as Error).message });
      return NEVER;
    }
  }),
);
/** A duration above zero: a GC interval or threshold of 0 would run or remove everything at once. */
const PositiveDuration = v.pipe(Duration, v.minValue(1, "must be a duration above zero, such as \"1h\""));
const Percent = v.pipe(v.number(), v.minValue(0), v.maxValue(100));
const StringMap = v.record(v.string(), v.string());
const NonNegativeInt = v.pipe(v.number(), v.integer(), v.minValue(0));
const PositiveInt = v.pipe(v.number(), v.integer(), v.minValue(1));

export const DEFAULT_HTTP_PORT = 4646;

/**
 * Most processes and threads one task may have at once, unless the job says
 * less (config { pids_limit }): a fork bomb stops there instead of at the
 * host's per-user limit. Room for a thread-heavy JVM, and a small share of
 * the host's pid_max (32768 at the least, 4 million with systemd).
 */
export const DEFAULT_TASK_PIDS_LIMIT = 4096;

/** Nomad's port list ("22,80,8000-8080"), checked here so a bad one names its file. */
const PortSpec = v.pipe(
  v.string(),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      parsePortSpec(dataset.value);
    } catch (err) {
      addIssue({ message: (err as Error).message });
    }
  }),
);

const ReservedSchema = v.strictObject({
  cpu: v.optional(NonNegativeInt, 0),
  memory: v.optional(NonNegativeInt, 0),
  disk: v.optional(NonNegativeInt, 0),
  reserved_ports: v.optional(PortSpec, ""),
});

const GoBoolText = v.picklist(["1", "0", "true", "false"], 'expected "true" or "false"');

/**
 * Nomad's client `options` map: only the options drover implements are
 * accepted; any other is refused by name rather than ignored.
 */
const ClientOptionsSchema = v.strictObject({
  /** Comma-separated host variables kept out of tasks; replaces the default list. */
  "env.denylist": v.optional(v.string()),
  /** Nomad's older name for env.denylist. */
  "env.blacklist": v.optional(v.string()),
  /** Nomad's older switch for plugin "raw_exec" { config { enabled = true } }. */
  "driver.raw_exec.enable": v.optional(GoBoolText),
});
export type ClientOptions = v.InferOutput<typeof ClientOptionsSchema>;

/** Nomad's RPC port, for a server address given without one. */
export const DEFAULT_RPC_PORT = 4647;

/** "host" or "host:port" of a Nomad server's RPC port; normalized to host:port. */
const ServerAddress = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.transform((address) => (/:\d+$/.test(address) ? address : `${address}:${DEFAULT_RPC_PORT}`)),
  v.check((address) => {
    const port = Number(address.slice(address.lastIndexOf(":") + 1));
    return port > 0 && port <= 65535;
  }, "expected host:port with a port from 1 to 65535"),
);

/**
 * client { host_volume "name" { path = "/srv/x"  read_only = false } }: a host
 * directory jobs may mount by name (group `volume { type = "host" source =
 * "name" }`). The path must exist when the agent starts.
 */
const HostVolumeSchema = v.strictObject({
  path: v.pipe(v.string(), v.startsWith("/", "must be an absolute path"), v.check((path) => path !== "/", "must not be / (the whole host)")),
  read_only: v.optional(v.boolean(), false),
});
export type HostVolumeConfig = v.InferOutput<typeof HostVolumeSchema>;

const HostVolumeName = v.pipe(v.string(), v.regex(/^[^\s\0/]+$/, "a host volume's name must be non-empty, without whitespace or '/'"));

/**
 * Nomad 1.6's node pools: the pool a node joins names a set of nodes jobs
 * may be placed on. Nomad's name rule (structs.ValidateNodePoolName); "all"
 * is built in and no node may register in it.
 */
const NodePoolName = v.pipe(
  v.string(),
  v.regex(/^[a-zA-Z0-9_-]{1,128}$/, "a node pool's name is 1 to 128 letters, digits, '-' or '_'"),
  v.check((name) => name !== "all", 'no node may join the built-in node pool "all"'),
);
/** The pool a node joins unless it says otherwise, as in Nomad. */
const DEFAULT_NODE_POOL = "default";

const ClientSchema = v.strictObject({
  enabled: v.optional(v.boolean(), true),
  /** Remote Nomad servers (RPC addresses) to join instead of the embedded server; needs server.enabled = false. */
  servers: v.optional(v.array(ServerAddress), []),
  /** Where alloc dirs live; default `<data_dir>/alloc`. */
  alloc_dir: v.optional(v.string()),
  /** Where the client state DB lives; default `<data_dir>/client`. */
  state_dir: v.optional(v.string()),
  node_class: v.optional(v.string(), ""),
  /**
   * How ephemeral_disk { size } is held: "filesystem" puts each alloc dir on
   * a loop-mounted ext4 image of its size, so a write past it fails (about
   * 50 ms more per alloc start); "poll" measures alloc dirs every few seconds
   * and kills an alloc over its size. Hosts that cannot mount images poll.
   */
  disk_limit: v.optional(v.picklist(["filesystem", "poll"]), "filesystem"),
  /** The node pool this node joins, in the embedded server or on remote Nomad servers (1.6+; older servers ignore it). */
  node_pool: v.optional(NodePoolName, DEFAULT_NODE_POOL),
  meta: v.optional(StringMap, {}),
  options: v.optional(ClientOptionsSchema, {}),
  /** Override of the fingerprinted CPU capacity in MHz. */
  cpu_total_compute: v.optional(NonNegativeInt),
  /** Override of the fingerprinted memory in MB. */
  memory_total_mb: v.optional(NonNegativeInt),
  max_kill_timeout: v.optional(Duration, "30s"),
  reserved: v.optional(ReservedSchema, {}),
  gc_interval: v.optional(Duration, "1m"),
  gc_disk_usage_threshold: v.optional(Percent, 80),
  gc_inode_usage_threshold: v.optional(Percent, 70),
  gc_max_allocs: v.optional(NonNegativeInt, 50),
  min_dynamic_port: v.optional(Port, 20000),
  max_dynamic_port: v.optional(Port, 32000),
  chroot_env: v.optional(StringMap),
  /** Parent cgroup of every task's cgroup (v1: a path in each hierarchy; v2: a slice). */
  cgroup_parent: v.optional(v.string(), "drover"),
  /** Most tasks one executor (supervisor process) holds; 1: an executor per task. */
  tasks_per_executor: v.optional(PositiveInt, DEFAULT_TASKS_PER_EXECUTOR),
  /** pids.max of every task's cgroup, and the most a job's pids_limit may ask for; 0 = no limit. */
  pids_limit: v.optional(NonNegativeInt, DEFAULT_TASK_PIDS_LIMIT),
  network_interface: v.optional(v.string()),
  /** Group bridge mode (docs/networking.md): where CNI plugins are looked for, the host bridge, and its subnet. */
  cni_path: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty")), DEFAULT_CNI_PATH),
  bridge_network_name: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,15}$/, "must be an interface name: 1-15 letters, digits, '_', '.' or '-'")), DEFAULT_BRIDGE_NAME),
  bridge_network_subnet: v.optional(v.pipe(v.string(), v.regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, 'must be an IPv4 CIDR, such as "172.26.64.0/20"')), DEFAULT_BRIDGE_SUBNET),
  host_volume: v.optional(v.record(HostVolumeName, HostVolumeSchema), {}),
});

/**
 * The embedded single-node server. Nomad's default is off because its clients
 * join remote servers; drover's default is on, so one host is a whole
 * cluster. Turned off, the client joins client.servers instead.
 */
const ServerSchema = v.strictObject({
  enabled: v.optional(v.boolean(), true),
  /**
   * Nomad 1.7's oidc_issuer: the URL workload identities name as their
   * issuer (`iss`), and what /.well-known/openid-configuration answers for,
   * so a third party can verify them. Unset: no discovery document.
   */
  oidc_issuer: v.optional(v.pipe(v.string(), v.url("must be a URL, such as https://nomad.example.com"))),
  /** Nomad's GC keys and defaults (nomad/config.go): how often a pass runs, and how old a finished object must be to go. */
  job_gc_interval: v.optional(PositiveDuration, "5m"),
  job_gc_threshold: v.optional(PositiveDuration, "4h"),
  eval_gc_threshold: v.optional(PositiveDuration, "1h"),
  batch_eval_gc_threshold: v.optional(PositiveDuration, "24h"),
  deployment_gc_threshold: v.optional(PositiveDuration, "1h"),
  node_gc_threshold: v.optional(PositiveDuration, "24h"),
});
export type ServerConfig = v.InferOutput<typeof ServerSchema>;

/**
 * Nomad turns host metrics and Prometheus text off by default; drover turns
 * them on, since its one node is the whole cluster and these are cheap. Per-task
 * gauges stay off unless asked: their series grow with the number of tasks.
 */
const TelemetrySchema = v.strictObject({
  collection_interval: v.optional(Duration, "1s"),
  publish_allocation_metrics: v.optional(v.boolean(), false),
  publish_node_metrics: v.optional(v.boolean(), true),
  prometheus_metrics: v.optional(v.boolean(), true),
});

/** Nomad enables raw_exec only when asked (it runs tasks unisolated, as the agent's user); -dev asks. */
const RawExecPluginSchema = v.strictObject({
  config: v.optional(v.strictObject({ enabled: v.optional(v.boolean(), false) }), {}),
});

/**
 * allow_caps: the capabilities an exec task may keep (Nomad's names, e.g. "net_bind_service").
 * allow_syscalls: calls of the default syscall filter a job may lift (config { syscall_add }); none by default.
 * default_pid_mode, default_ipc_mode: "private" (Nomad's default) or "host", for tasks that set no pid_mode/ipc_mode.
 */
const ExecPluginSchema = v.strictObject({
  config: v.optional(
    v.strictObject({
      allow_caps: v.optional(v.array(v.picklist(CAPABILITY_NAMES, "unknown capability"))),
      allow_syscalls: v.optional(v.array(FilteredSyscallSchema), []),
      default_pid_mode: v.optional(IsolationModeSchema, "private"),
      default_ipc_mode: v.optional(IsolationModeSchema, "private"),
    }),
    {},
  ),
});

/**
 * The docker driver (docs/docker-driver.md). allow_privileged: whether a job
 * may set `privileged` (every capability, no syscall filter). allow_caps: what
 * cap_add may ask for and what a task keeps of Docker's default set; Nomad's
 * default set (Docker's without net_raw) when absent.
 * auth.config: a Docker config.json whose `auths` give registry credentials
 * when a job has no auth block. insecure_registries: registries (host[:port])
 * reached over plain HTTP when they have no TLS, as in Docker's daemon.json.
 * certs_dir: Docker's certs.d layout of registry CAs and client certificates.
 * gc: Nomad's image collection, an image removed image_delay after its last
 * task ended.
 */
const DockerPluginSchema = v.strictObject({
  config: v.optional(
    v.strictObject({
      allow_privileged: v.optional(v.boolean(), false),
      allow_caps: ExecPluginSchema.entries.config.wrapped.entries.allow_caps,
      auth: v.optional(v.strictObject({ config: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))) }), {}),
      insecure_registries: v.optional(v.array(v.string()), []),
      certs_dir: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty")), "/etc/docker/certs.d"),
      gc: v.optional(v.strictObject({ image: v.optional(v.boolean(), true), image_delay: v.optional(Duration, "3m") }), {}),
    }),
    {},
  ),
});

/**
 * Nomad's ACL system: with `enabled`, every request is judged by its token's
 * policies (src/api/acl/). The expiry bounds are Nomad's names and defaults.
 */
const AclSchema = v.pipe(
  v.strictObject({
    enabled: v.optional(v.boolean(), false),
    token_min_expiration_ttl: v.optional(Duration, "1m"),
    token_max_expiration_ttl: v.optional(Duration, "24h"),
  }),
  v.check((acl) => acl.token_min_expiration_ttl <= acl.token_max_expiration_ttl, "token_min_expiration_ttl is longer than token_max_expiration_ttl"),
);

/** TLS versions a client may use: 1.0 and 1.1 are broken, so they are not offered. */
const TLS_MIN_VERSIONS = ["tls12", "tls13"] as const;

/**
 * TLS on the HTTP API, with Nomad's keys. The files are read at start and
 * again on SIGHUP. `verify_https_client` asks every client for a
 * certificate signed by `ca_file`.
 */
const TlsSchema = v.pipe(
  v.strictObject({
    http: v.optional(v.boolean(), false),
    ca_file: v.optional(v.string()),
    cert_file: v.optional(v.string()),
    key_file: v.optional(v.string()),
    verify_https_client: v.optional(v.boolean(), false),
    tls_min_version: v.optional(v.picklist(TLS_MIN_VERSIONS, 'expected "tls12" or "tls13" (older versions are not offered)'), "tls12"),
  }),
  v.check((tls) => !tls.http || (tls.cert_file !== undefined && tls.key_file !== undefined), "http = true needs cert_file and key_file"),
  v.check((tls) => !tls.verify_https_client || tls.ca_file !== undefined, "verify_https_client = true needs ca_file (the CA that signs client certificates)"),
);
export type TlsConfig = v.InferOutput<typeof TlsSchema>;

/**
 * An address alone, as Nomad takes bind_addr: "127.0.0.1:4646" would
 * otherwise only fail when the listener resolves "127.0.0.1:4646:4646".
 */
const BindAddress = v.pipe(
  v.string(),
  v.check(
    (address) => !/^[^:]*:\d+$/.test(address) && !/^\[.*\]:\d+$/.test(address),
    "expected an address without a port: the port is ports.http (or -http-port)",
  ),
);

/**
 * The built-in NVIDIA device plugin: on unless turned off; a host without
 * NVML simply has no NVIDIA devices. Nomad names it `plugin "nvidia-gpu"`;
 * drover takes that name or `plugin "nvidia"`.
 */
const NvidiaPluginConfigSchema = v.strictObject({
  enabled: v.optional(v.boolean(), true),
  /** GPU UUIDs to leave out of the node's devices. */
  ignored_gpu_ids: v.optional(v.array(v.string()), []),
  /** How often the GPUs are listed again, to notice one appearing or going. */
  fingerprint_period: v.optional(Duration, "1m"),
});
const NvidiaPluginSchema = v.strictObject({ config: v.optional(NvidiaPluginConfigSchema, {}) });
export type NvidiaPluginConfig = v.InferOutput<typeof NvidiaPluginConfigSchema>;

/** The NVIDIA plugin's config under either of its names, with its defaults. */
export function nvidiaPluginConfig(config: AgentConfig): NvidiaPluginConfig {
  return (config.plugin["nvidia-gpu"] ?? config.plugin.nvidia ?? v.parse(NvidiaPluginSchema, {})).config;
}

export const AgentConfigSchema = v.strictObject({
  name: v.optional(v.string()),
  region: v.optional(v.string(), "global"),
  datacenter: v.optional(v.string(), "dc1"),
  data_dir: v.optional(v.string()),
  bind_addr: v.optional(BindAddress, "127.0.0.1"),
  log_level: v.optional(LogLevelSchema, "INFO"),
  log_json: v.optional(v.boolean(), false),
  ports: v.optional(v.strictObject({ http: v.optional(Port, DEFAULT_HTTP_PORT) }), {}),
  addresses: v.optional(v.strictObject({ http: v.optional(v.string()) }), {}),
  /** The HTTP address other hosts reach this agent at ("host" or "host:port"), given to Nomad servers as the node's HTTPAddr. */
  advertise: v.optional(v.strictObject({ http: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))) }), {}),
  client: v.optional(ClientSchema, {}),
  server: v.optional(ServerSchema, {}),
  telemetry: v.optional(TelemetrySchema, {}),
  acl: v.optional(AclSchema, {}),
  tls: v.optional(TlsSchema, {}),
  plugin: v.optional(
    v.strictObject({
      raw_exec: v.optional(RawExecPluginSchema, {}),
      exec: v.optional(ExecPluginSchema, {}),
      docker: v.optional(DockerPluginSchema, {}),
      nvidia: v.optional(NvidiaPluginSchema),
      "nvidia-gpu": v.optional(NvidiaPluginSchema),
    }),
    {},
  ),
});

/** The configuration after defaults; durations are in milliseconds. */
export type AgentConfig = v.InferOutput<typeof AgentConfigSchema>;
