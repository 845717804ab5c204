/**
 * A job as the server stores and serves it: Nomad's API JSON, the whole of
 * it (field names, nesting, nanosecond durations), whether or not drover
 * runs a field. Parsing is separate from support: a job keeps every block it
 * was written with and round-trips unchanged; what drover cannot run is
 * decided where Nomad decides it (placement for a missing driver, the
 * client's hooks for a block it cannot run).
 *
 * Every field is present: src/jobspec/defaults.ts applies Nomad's api
 * Canonicalize before parsing, so a consumer never guesses a default.
 * Optional blocks Nomad leaves nil stay null. These schemas check shapes,
 * as Nomad's parser does; what a job needs to be registered (a group, a
 * driver, a datacenter) and the rules that span fields are Nomad's
 * Job.Validate, in src/jobspec/validate.ts.
 *
 * The schemas also carry, as valibot metadata, how each field is spelled in
 * an HCL job file (src/jobspec/hcl-job.ts walks them): the name when it is
 * not the snake_case of the JSON key, which lists are labelled blocks,
 * which numbers are durations, which maps are free-form.
 */
import * as v from "valibot";
import { LogMaxFileSizeMbSchema, LogMaxFilesSchema } from "../lib/log-config.ts";
import { NS_PER_SECOND } from "../lib/units.ts";
import { Int, Nanoseconds, NonNegativeInt, StringMap, UnixNanos } from "./common.ts";

/** How an HCL job file spells a field (read by src/jobspec/hcl-job.ts). */
export interface HclMeta {
  /** The HCL name, when it is not the snake_case of the JSON key. */
  hcl?: string;
  /** Labelled blocks (`task "web" {}`): the key the label is stored under. */
  label?: string;
  /** A Go duration: "30s" in HCL, nanoseconds in JSON. */
  duration?: true;
  /** Free-form (a driver's config): kept as HCL gives it. */
  freeform?: true;
  /** Set by the server or only in API JSON: not written in HCL. */
  jsonOnly?: true;
}

const annotate = <S extends v.GenericSchema>(schema: S, meta: HclMeta) => v.pipe(schema, v.metadata<v.InferOutput<S>, { hcl: HclMeta }>({ hcl: meta }));
const named = <S extends v.GenericSchema>(schema: S, name: string) => annotate(schema, { hcl: name });
const jsonOnly = <S extends v.GenericSchema>(schema: S) => annotate(schema, { jsonOnly: true });

/** A Go time.Duration (nanoseconds in JSON, "30s" in HCL). */
export const Duration = annotate(Nanoseconds, { duration: true });
const NullableDuration = v.nullable(Duration);
const Strings = v.array(v.string());
/** Free-form values (driver config, scaling policy, proxy config). */
const Freeform = annotate(v.record(v.string(), v.unknown()), { freeform: true });

/** The types Nomad knows; drover's server places all four (system and sysbatch: one alloc per node). */
export const JOB_TYPES = ["service", "batch", "system", "sysbatch"] as const;
export type JobType = (typeof JOB_TYPES)[number];

/** The drivers drover has; any other driver parses and is a placement failure naming it. */
export const DRIVERS = ["raw_exec", "exec", "docker"] as const;
export type DriverName = (typeof DRIVERS)[number];

export const RESTART_MODES = ["fail", "delay"] as const;
/** The network modes drover's client runs; others parse and fail the alloc's tasks. */
export const NETWORK_MODES = ["host", "none", "bridge"] as const;
export const LIFECYCLE_HOOKS = ["prestart", "poststart", "poststop"] as const;
export const JOB_STATUSES = ["pending", "running", "dead"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** "script" (Nomad 1.4+) registers; drover's client refuses it at task start. */
export const TEMPLATE_CHANGE_MODES = ["noop", "restart", "signal", "script"] as const;
/** Nomad 1.3+'s service providers; drover registers both kinds in its own catalog. */
export const SERVICE_PROVIDERS = ["consul", "nomad"] as const;
/** How a service's checks count while a deployment watches it (Nomad 1.1+). */
export const ON_UPDATE_MODES = ["require_healthy", "ignore_warnings", "ignore"] as const;
export const ARTIFACT_MODES = ["any", "file", "dir"] as const;
export const CHECK_TYPES = ["http", "tcp", "script", "grpc"] as const;

/** A group's `scaling` policy type (it scales the count); a task's `scaling "cpu"`/`"mem"` are vertical. */
export const HORIZONTAL_SCALING = "horizontal";
export const TASK_SCALING_TYPES: Readonly<Record<string, string>> = { cpu: "vertical_cpu", mem: "vertical_mem" };

/** The name of a task's default workload identity (an `identity` block without a name takes it). */
export const DEFAULT_IDENTITY = "default";

/** The only namespace a single-node drover has (Nomad's default). */
export const DEFAULT_NAMESPACE = "default";

/** Port labels become NOMAD_PORT_<label>, so they must be valid in a variable name. */
export const PORT_LABEL = /^[a-zA-Z0-9_-]+$/;

export const ConstraintSchema = v.strictObject({
  LTarget: named(v.string(), "attribute"),
  RTarget: named(v.string(), "value"),
  Operand: named(v.string(), "operator"),
});
export type Constraint = v.InferOutput<typeof ConstraintSchema>;

export const AffinitySchema = v.strictObject({
  LTarget: named(v.string(), "attribute"),
  RTarget: named(v.string(), "value"),
  Operand: named(v.string(), "operator"),
  Weight: v.pipe(Int, v.minValue(-100), v.maxValue(100)),
});

export const SpreadSchema = v.strictObject({
  Attribute: v.string(),
  Weight: v.pipe(Int, v.minValue(-100), v.maxValue(100)),
  SpreadTarget: v.array(v.strictObject({ Value: v.string(), Percent: v.pipe(Int, v.minValue(0), v.maxValue(100)) })),
});

export const RestartPolicySchema = v.strictObject({
  Attempts: NonNegativeInt,
  Interval: Duration,
  Delay: Duration,
  Mode: v.picklist(RESTART_MODES),
  /** Nomad 1.6+: re-render the task's templates on restart. */
  RenderTemplates: v.boolean(),
});
export type RestartPolicy = v.InferOutput<typeof RestartPolicySchema>;

export const ReschedulePolicySchema = v.strictObject({
  Attempts: NonNegativeInt,
  Interval: Duration,
  Delay: Duration,
  DelayFunction: v.string(),
  MaxDelay: Duration,
  Unlimited: v.boolean(),
});

export const UpdateStrategySchema = v.strictObject({
  Stagger: Duration,
  MaxParallel: NonNegativeInt,
  HealthCheck: v.string(),
  MinHealthyTime: Duration,
  HealthyDeadline: Duration,
  ProgressDeadline: Duration,
  Canary: NonNegativeInt,
  AutoRevert: v.boolean(),
  AutoPromote: v.boolean(),
});
export type UpdateStrategy = v.InferOutput<typeof UpdateStrategySchema>;

export const MigrateStrategySchema = v.strictObject({
  MaxParallel: NonNegativeInt,
  HealthCheck: v.string(),
  MinHealthyTime: Duration,
  HealthyDeadline: Duration,
});

/** Nomad's DefaultMigrateStrategy: a group's `migrate` when it says nothing (the job's default, and the client's health judge's). */
export const DEFAULT_MIGRATE_STRATEGY = { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * NS_PER_SECOND, HealthyDeadline: 300 * NS_PER_SECOND } as const;

export const PeriodicConfigSchema = v.strictObject({
  Enabled: v.boolean(),
  /** HCL writes it as `cron`. */
  Spec: named(v.string(), "cron"),
  /** Nomad 1.6+: several cron lines (`crons`); the next launch is the earliest of them. */
  Specs: named(v.nullable(Strings), "crons"),
  SpecType: jsonOnly(v.string()),
  ProhibitOverlap: v.boolean(),
  TimeZone: v.string(),
});

export type PeriodicConfig = v.InferOutput<typeof PeriodicConfigSchema>;

export const ParameterizedJobConfigSchema = v.strictObject({
  Payload: v.string(),
  MetaRequired: Strings,
  MetaOptional: Strings,
});

export const MultiregionSchema = v.strictObject({
  Strategy: v.nullable(v.strictObject({ MaxParallel: NonNegativeInt, OnFailure: v.string() })),
  Regions: named(
    annotate(v.array(v.strictObject({ Name: v.string(), Count: NonNegativeInt, Datacenters: Strings, NodePool: v.string(), Meta: StringMap })), { label: "Name" }),
    "region",
  ),
});

export const ScalingPolicySchema = v.strictObject({
  ID: jsonOnly(v.string()),
  Namespace: jsonOnly(v.string()),
  Target: jsonOnly(StringMap),
  Min: NonNegativeInt,
  Max: NonNegativeInt,
  Policy: v.nullable(Freeform),
  Enabled: v.boolean(),
  /** "horizontal" for a group's count; a task's `scaling "cpu"`/`"mem"` are "vertical_cpu"/"vertical_mem". */
  Type: v.string(),
  CreateIndex: jsonOnly(NonNegativeInt),
  ModifyIndex: jsonOnly(NonNegativeInt),
});

export const ResourcesDeviceSchema = v.strictObject({
  Name: v.string(),
  Count: NonNegativeInt,
  Constraints: named(v.array(ConstraintSchema), "constraint"),
  Affinities: named(v.array(AffinitySchema), "affinity"),
});

export const PortSchema = v.strictObject({
  Label: v.pipe(v.string(), v.regex(PORT_LABEL, "must be letters, digits, underscores or dashes (it names NOMAD_PORT_<label>)")),
  /** The host port: set by the job for a static port, by placement for a dynamic one (0 until then). */
  Value: named(v.pipe(Int, v.minValue(0), v.maxValue(65535)), "static"),
  /** The port the task listens on when it differs from Value (NOMAD_PORT_<label>); 0 when the same. */
  To: v.pipe(Int, v.minValue(-1), v.maxValue(65535)),
  HostNetwork: v.string(),
  /** Nomad 1.7+: a static port that may be shared with other allocations. */
  IgnoreCollision: v.boolean(),
});
export type Port = v.InferOutput<typeof PortSchema>;

export const NetworkResourceSchema = v.strictObject({
  /** host, none or bridge on drover's client (NETWORK_MODES); any other mode (cni/<name>) parses and fails the alloc's tasks. */
  Mode: v.string(),
  Device: v.string(),
  CIDR: v.string(),
  /** Set in an allocation: the address the ports are bound on. Empty in a job. */
  IP: v.string(),
  MBits: named(NonNegativeInt, "mbits"),
  DNS: v.nullable(v.strictObject({ Servers: Strings, Searches: Strings, Options: Strings })),
  /** Bridge mode's hostname inside the network namespace. */
  Hostname: v.string(),
  /** Nomad 1.8+: arguments for CNI plugins (cni/<name> modes). */
  CNI: v.nullable(v.strictObject({ Args: v.nullable(StringMap) })),
  /** HCL writes both as `port "label" {}`: with `static` reserved, without dynamic. */
  ReservedPorts: jsonOnly(v.array(PortSchema)),
  DynamicPorts: jsonOnly(v.array(PortSchema)),
});
export type NetworkResource = v.InferOutput<typeof NetworkResourceSchema>;

export const ResourcesSchema = v.strictObject({
  /** MHz; 0 only when `cores` reserves whole cores instead (src/jobspec/validate.ts). */
  CPU: NonNegativeInt,
  /** Nomad 1.1+: whole CPU cores reserved for the task; drover's client refuses it at task start. */
  Cores: NonNegativeInt,
  /** The reservation placement counts, in MB. Nomad's minimum is 10. */
  MemoryMB: named(v.pipe(Int, v.minValue(10)), "memory"),
  /** The hard limit when oversubscribing (memory_max); 0 means MemoryMB is the limit. */
  MemoryMaxMB: named(NonNegativeInt, "memory_max"),
  /** Nomad 0.12 took disk per task; it is the group's ephemeral_disk since. */
  DiskMB: named(v.nullable(NonNegativeInt), "disk"),
  IOPS: v.nullable(NonNegativeInt),
  /** Nomad 0.12's task-level network; the group's `network` since. */
  Networks: named(v.array(NetworkResourceSchema), "network"),
  /** Device requests (issue 14): parsed and kept. */
  Devices: named(annotate(v.array(ResourcesDeviceSchema), { label: "Name" }), "device"),
  /** Nomad 1.7+ (Enterprise): NUMA-aware placement of `cores`. */
  NUMA: v.nullable(v.strictObject({ Affinity: v.string(), Devices: v.nullable(Strings) })),
  /** Nomad 1.9+: the size of the task's secrets/ tmpfs, in MB. */
  SecretsMB: named(v.nullable(NonNegativeInt), "secrets"),
});
export type Resources = v.InferOutput<typeof ResourcesSchema>;

export const LogConfigSchema = v.strictObject({
  MaxFiles: LogMaxFilesSchema,
  MaxFileSizeMB: named(LogMaxFileSizeMbSchema, "max_file_size"),
  /** Nomad 1.6+: no log collection for the task. */
  Disabled: v.boolean(),
  /** Nomad 1.5's spelling of the opposite of Disabled, kept as submitted (null when not written). */
  Enabled: v.nullable(v.boolean()),
});
export type LogConfig = v.InferOutput<typeof LogConfigSchema>;

export const TaskLifecycleSchema = v.strictObject({
  Hook: v.picklist(LIFECYCLE_HOOKS),
  Sidecar: v.boolean(),
});
export type TaskLifecycle = v.InferOutput<typeof TaskLifecycleSchema>;

export const EphemeralDiskSchema = v.strictObject({
  Sticky: v.boolean(),
  Migrate: v.boolean(),
  SizeMB: named(v.pipe(Int, v.minValue(1)), "size"),
});
export type EphemeralDisk = v.InferOutput<typeof EphemeralDiskSchema>;

export const CheckRestartSchema = v.strictObject({
  /** Restart the task after this many consecutive unhealthy checks; 0 never. */
  Limit: NonNegativeInt,
  /** How long after the task starts before its checks count. */
  Grace: Duration,
  IgnoreWarnings: v.boolean(),
});
export type CheckRestart = v.InferOutput<typeof CheckRestartSchema>;

export const ServiceCheckSchema = v.strictObject({
  Id: jsonOnly(v.string()),
  Name: v.string(),
  Type: v.string(),
  Command: v.string(),
  Args: Strings,
  Path: v.string(),
  Protocol: v.string(),
  PortLabel: named(v.string(), "port"),
  Expose: v.boolean(),
  AddressMode: v.string(),
  /** Nomad 1.8+ (Consul): which address the check targets. */
  Advertise: v.string(),
  Interval: Duration,
  Timeout: Duration,
  InitialStatus: v.string(),
  Notes: v.string(),
  TLSServerName: named(v.string(), "tls_server_name"),
  TLSSkipVerify: v.boolean(),
  Header: v.record(v.string(), Strings),
  Method: v.string(),
  CheckRestart: v.nullable(CheckRestartSchema),
  GRPCService: v.string(),
  GRPCUseTLS: v.boolean(),
  TaskName: named(v.string(), "task"),
  SuccessBeforePassing: NonNegativeInt,
  FailuresBeforeCritical: NonNegativeInt,
  FailuresBeforeWarning: NonNegativeInt,
  /** An http check's request body. */
  Body: v.string(),
  /** Nomad 1.1+: how the check counts during a deployment ("require_healthy", "ignore_warnings", "ignore"). */
  OnUpdate: v.string(),
});
export type ServiceCheck = v.InferOutput<typeof ServiceCheckSchema>;

/** Nomad 1.7+: a workload identity, a JWT the task (or Consul, Vault) is given. */
export const WorkloadIdentitySchema = v.strictObject({
  Name: v.string(),
  Audience: named(Strings, "aud"),
  ChangeMode: v.string(),
  ChangeSignal: v.string(),
  Env: v.boolean(),
  File: v.boolean(),
  Filepath: v.string(),
  ServiceName: v.string(),
  TTL: named(Duration, "ttl"),
});
export type WorkloadIdentity = v.InferOutput<typeof WorkloadIdentitySchema>;
/** What names and bounds a signed identity. */
export type IdentitySpec = Pick<WorkloadIdentity, "Name" | "Audience" | "TTL">;

export const VolumeMountSchema = v.strictObject({
  Volume: v.string(),
  Destination: v.string(),
  ReadOnly: v.boolean(),
  PropagationMode: v.string(),
  SELinuxLabel: named(v.string(), "selinux_label"),
});
export type VolumeMount = v.InferOutput<typeof VolumeMountSchema>;

/** Nomad 1.7+: which Consul cluster, namespace and partition a group or task uses. */
export const ConsulSchema = v.strictObject({
  Namespace: v.string(),
  Cluster: v.string(),
  Partition: v.string(),
});

const ConsulUpstreamSchema = v.strictObject({
  DestinationName: v.string(),
  DestinationNamespace: v.string(),
  DestinationPeer: v.string(),
  DestinationPartition: v.string(),
  DestinationType: v.string(),
  LocalBindPort: NonNegativeInt,
  Datacenter: v.string(),
  LocalBindAddress: v.string(),
  LocalBindSocketPath: v.string(),
  LocalBindSocketMode: v.string(),
  MeshGateway: v.nullable(v.strictObject({ Mode: v.string() })),
  Config: v.nullable(Freeform),
});
const ConsulExposePathSchema = v.strictObject({
  Path: v.string(),
  Protocol: v.string(),
  LocalPathPort: NonNegativeInt,
  ListenerPort: v.string(),
});

const ConsulProxySchema = v.strictObject({
  LocalServiceAddress: v.string(),
  LocalServicePort: NonNegativeInt,
  /** Nomad 0.12's name for `expose`; drover fills both (src/jobspec/defaults.ts). */
  ExposeConfig: named(v.nullable(v.strictObject({ Path: v.array(ConsulExposePathSchema) })), "expose"),
  /** Nomad 1.x's name for the same block. */
  Expose: jsonOnly(v.nullable(v.strictObject({ Paths: v.array(ConsulExposePathSchema) }))),
  Upstreams: v.array(ConsulUpstreamSchema),
  TransparentProxy: v.nullable(
    v.strictObject({
      UID: named(v.string(), "uid"),
      OutboundPort: NonNegativeInt,
      ExcludeInboundPorts: v.nullable(Strings),
      ExcludeOutboundPorts: v.nullable(v.array(NonNegativeInt)),
      ExcludeOutboundCIDRs: named(v.nullable(Strings), "exclude_outbound_cidrs"),
      ExcludeUIDs: named(v.nullable(Strings), "exclude_uids"),
      NoDNS: named(v.boolean(), "no_dns"),
    }),
  ),
  Config: v.nullable(Freeform),
});

const SidecarTaskSchema = v.strictObject({
  Name: v.string(),
  Driver: v.string(),
  User: v.string(),
  Config: v.nullable(Freeform),
  Env: v.nullable(StringMap),
  Resources: v.nullable(ResourcesSchema),
  Meta: v.nullable(StringMap),
  KillTimeout: NullableDuration,
  LogConfig: named(v.nullable(LogConfigSchema), "logs"),
  ShutdownDelay: NullableDuration,
  KillSignal: v.string(),
  VolumeMounts: named(v.nullable(v.array(VolumeMountSchema)), "volume_mount"),
});

const GatewayTlsSchema = v.strictObject({
  Enabled: v.boolean(),
  TLSMinVersion: named(v.string(), "tls_min_version"),
  TLSMaxVersion: named(v.string(), "tls_max_version"),
  CipherSuites: v.nullable(Strings),
  SDS: named(v.nullable(v.strictObject({ ClusterName: v.string(), CertResource: v.string() })), "sds"),
});

const HeaderModifiersSchema = v.strictObject({
  Add: v.nullable(StringMap),
  Set: v.nullable(StringMap),
  Remove: v.nullable(Strings),
});

const ConsulGatewaySchema = v.strictObject({
  Proxy: v.nullable(
    v.strictObject({
      ConnectTimeout: NullableDuration,
      EnvoyGatewayBindTaggedAddresses: v.boolean(),
      EnvoyGatewayBindAddresses: annotate(
        v.nullable(v.record(v.string(), v.strictObject({ Name: v.string(), Address: v.string(), Port: NonNegativeInt }))),
        { label: "Name" },
      ),
      EnvoyGatewayNoDefaultBind: v.boolean(),
      EnvoyDNSDiscoveryType: named(v.string(), "envoy_dns_discovery_type"),
      Config: v.nullable(Freeform),
    }),
  ),
  Ingress: v.nullable(
    v.strictObject({
      TLS: named(v.nullable(GatewayTlsSchema), "tls"),
      Listeners: named(
        v.array(
          v.strictObject({
            Port: NonNegativeInt,
            Protocol: v.string(),
            Services: named(
              v.array(
                v.strictObject({
                  Name: v.string(),
                  Hosts: v.nullable(Strings),
                  TLS: named(v.nullable(GatewayTlsSchema), "tls"),
                  RequestHeaders: v.nullable(HeaderModifiersSchema),
                  ResponseHeaders: v.nullable(HeaderModifiersSchema),
                  MaxConnections: v.nullable(NonNegativeInt),
                  MaxPendingRequests: v.nullable(NonNegativeInt),
                  MaxConcurrentRequests: v.nullable(NonNegativeInt),
                }),
              ),
              "service",
            ),
          }),
        ),
        "listener",
      ),
    }),
  ),
  /** Nomad 1.0+: a terminating gateway's linked services. */
  Terminating: v.nullable(
    v.strictObject({
      Services: named(
        v.array(
          v.strictObject({ Name: v.string(), CAFile: named(v.string(), "ca_file"), CertFile: v.string(), KeyFile: v.string(), SNI: named(v.string(), "sni") }),
        ),
        "service",
      ),
    }),
  ),
  /** Nomad 1.1+: a mesh gateway (an empty block). */
  Mesh: v.nullable(v.strictObject({})),
});

/** Consul Connect: parsed and kept; drover has no Consul, so a task that needs it fails naming the block. */
export const ConsulConnectSchema = v.strictObject({
  Native: v.boolean(),
  Gateway: v.nullable(ConsulGatewaySchema),
  SidecarService: v.nullable(
    v.strictObject({
      Tags: v.nullable(Strings),
      Port: v.string(),
      Proxy: v.nullable(ConsulProxySchema),
      DisableDefaultTCPCheck: named(v.boolean(), "disable_default_tcp_check"),
      Meta: v.nullable(StringMap),
    }),
  ),
  SidecarTask: v.nullable(SidecarTaskSchema),
});

export const ServiceSchema = v.strictObject({
  Id: jsonOnly(v.string()),
  Name: v.string(),
  /** Nomad 1.3+: "nomad" or "consul"; drover registers every service in its own catalog. */
  Provider: v.string(),
  Tags: Strings,
  CanaryTags: Strings,
  EnableTagOverride: v.boolean(),
  PortLabel: named(v.string(), "port"),
  AddressMode: v.string(),
  /** Nomad 1.2+: an address to advertise instead of the alloc's. */
  Address: v.string(),
  Checks: named(v.array(ServiceCheckSchema), "check"),
  CheckRestart: v.nullable(CheckRestartSchema),
  Connect: v.nullable(ConsulConnectSchema),
  Meta: StringMap,
  CanaryMeta: StringMap,
  TaggedAddresses: v.nullable(StringMap),
  TaskName: named(v.string(), "task"),
  /** Nomad 1.1+: how the service's checks count during a deployment (the checks' default). */
  OnUpdate: v.string(),
  Identity: v.nullable(WorkloadIdentitySchema),
  Weights: v.nullable(v.strictObject({ Passing: Int, Warning: Int })),
  /** Nomad 1.7+: which Consul cluster registers it. */
  Cluster: v.string(),
  /** Nomad 1.9+: a Consul service kind. */
  Kind: v.string(),
});
export type Service = v.InferOutput<typeof ServiceSchema>;

export const TaskArtifactSchema = v.strictObject({
  GetterSource: named(v.string(), "source"),
  GetterOptions: named(StringMap, "options"),
  /** Nomad 1.2+: HTTP headers for the download. */
  GetterHeaders: named(v.nullable(StringMap), "headers"),
  GetterMode: named(v.picklist(ARTIFACT_MODES), "mode"),
  /** Nomad 1.5+: allow plain http/TLS without verification. */
  GetterInsecure: named(v.boolean(), "insecure"),
  RelativeDest: named(v.string(), "destination"),
  /** Nomad 1.7+: hand the downloaded files to the task's user. */
  Chown: v.boolean(),
});
export type TaskArtifact = v.InferOutput<typeof TaskArtifactSchema>;

export const TemplateSchema = v.strictObject({
  SourcePath: named(v.string(), "source"),
  DestPath: named(v.string(), "destination"),
  EmbeddedTmpl: named(v.string(), "data"),
  /** One of TEMPLATE_CHANGE_MODES (checked on register, as Nomad does). */
  ChangeMode: v.string(),
  ChangeSignal: v.string(),
  /** Nomad 1.4+: change_mode "script" runs this in the task. */
  ChangeScript: v.nullable(
    v.strictObject({ Command: v.string(), Args: Strings, Timeout: Duration, FailOnError: v.boolean() }),
  ),
  /** Nomad 1.5+: render once and never re-render. */
  Once: v.boolean(),
  Splay: Duration,
  Perms: v.pipe(v.string(), v.regex(/^[0-7]{3,4}$/, "must be octal file permissions such as \"0644\"")),
  /** Nomad 1.3+: the rendered file's owner (null: the task's user). */
  Uid: v.nullable(Int),
  Gid: v.nullable(Int),
  LeftDelim: named(v.string(), "left_delimiter"),
  RightDelim: named(v.string(), "right_delimiter"),
  Envvars: named(v.boolean(), "env"),
  VaultGrace: Duration,
  /** Nomad 1.2+: the quiescence window before rendering. */
  Wait: v.nullable(v.strictObject({ Min: NullableDuration, Max: NullableDuration })),
  ErrMissingKey: named(v.boolean(), "error_on_missing_key"),
});
export type Template = v.InferOutput<typeof TemplateSchema>;

export const VaultSchema = v.strictObject({
  Policies: Strings,
  /** Nomad 1.7+: the Vault role for workload identity. */
  Role: v.string(),
  Namespace: v.string(),
  Cluster: v.string(),
  Env: v.boolean(),
  DisableFile: v.boolean(),
  ChangeMode: v.string(),
  ChangeSignal: v.string(),
  AllowTokenExpiration: v.boolean(),
});

export const VolumeRequestSchema = v.strictObject({
  Name: v.string(),
  /** "host" is the kind drover's client mounts; "csi" parses and fails the alloc's tasks. */
  Type: v.string(),
  Source: v.string(),
  ReadOnly: v.boolean(),
  /** Nomad 1.10+: a host volume that stays with the allocation's node. */
  Sticky: v.boolean(),
  /** CSI (and Nomad 1.10 dynamic host volumes): "single-node-writer", "multi-node-reader-only", ... */
  AccessMode: v.string(),
  /** CSI: "file-system" or "block-device". */
  AttachmentMode: v.string(),
  MountOptions: v.nullable(v.strictObject({ FSType: v.string(), MountFlags: v.nullable(Strings) })),
  /** Source gets "[N]" appended, N the alloc's index. */
  PerAlloc: v.boolean(),
});
export type VolumeRequest = v.InferOutput<typeof VolumeRequestSchema>;

export const TaskSchema = v.strictObject({
  Name: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  /** Any driver parses; one the node lacks is a placement failure that names it. */
  Driver: v.string(),
  /** Run the task as this user; "" runs it as the agent's user. */
  User: v.string(),
  Lifecycle: v.nullable(TaskLifecycleSchema),
  /** The driver's own block; raw_exec's and exec's are read by src/structs/driver-config.ts. */
  Config: Freeform,
  Constraints: named(v.array(ConstraintSchema), "constraint"),
  Affinities: named(v.array(AffinitySchema), "affinity"),
  Env: StringMap,
  Services: named(v.array(ServiceSchema), "service"),
  Resources: ResourcesSchema,
  /** The group's policy merged with the task's own. */
  RestartPolicy: named(RestartPolicySchema, "restart"),
  Meta: StringMap,
  KillTimeout: Duration,
  LogConfig: named(LogConfigSchema, "logs"),
  Artifacts: named(v.array(TaskArtifactSchema), "artifact"),
  Vault: v.nullable(VaultSchema),
  Templates: named(v.array(TemplateSchema), "template"),
  DispatchPayload: v.nullable(v.strictObject({ File: v.string() })),
  VolumeMounts: named(v.array(VolumeMountSchema), "volume_mount"),
  CSIPluginConfig: named(
    v.nullable(
      v.strictObject({ ID: v.string(), Type: v.string(), MountDir: v.string(), StagePublishBaseDir: v.string(), HealthTimeout: Duration }),
    ),
    "csi_plugin",
  ),
  Leader: v.boolean(),
  /** How long to wait between deregistering the task's services and killing it. */
  ShutdownDelay: Duration,
  /** "" means SIGINT, Nomad's default kill signal. */
  KillSignal: v.string(),
  Kind: v.string(),
  Consul: v.nullable(ConsulSchema),
  /** Nomad 1.5+: `scaling "cpu"` and `scaling "mem"` (vertical autoscaling policies). */
  ScalingPolicies: named(v.nullable(v.array(ScalingPolicySchema)), "scaling"),
  /** Named workload identities (first: the HCL reader gives `identity` blocks to the first field of that name). */
  Identities: named(v.nullable(v.array(WorkloadIdentitySchema)), "identity"),
  /** The default workload identity (Nomad 1.7+ moves an unnamed `identity` here); named so its problems read `identity`. */
  Identity: named(v.nullable(WorkloadIdentitySchema), "identity"),
  /** Nomad 1.7+: commands an operator may run in the task (`nomad action`). */
  Actions: named(annotate(v.nullable(v.array(v.strictObject({ Name: v.string(), Command: v.string(), Args: Strings }))), { label: "Name" }), "action"),
  /** Nomad 1.8+ (Enterprise): a time window the task runs in. */
  Schedule: v.nullable(v.strictObject({ Cron: v.nullable(v.strictObject({ Start: v.string(), End: v.string(), Timezone: v.string() })) })),
});
export type Task = v.InferOutput<typeof TaskSchema>;

export const TaskGroupSchema = v.strictObject({
  Name: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  Count: NonNegativeInt,
  Constraints: named(v.array(ConstraintSchema), "constraint"),
  Affinities: named(v.array(AffinitySchema), "affinity"),
  Tasks: named(annotate(v.array(TaskSchema), { label: "Name" }), "task"),
  Spreads: named(v.array(SpreadSchema), "spread"),
  Volumes: named(annotate(v.record(v.string(), VolumeRequestSchema), { label: "Name" }), "volume"),
  RestartPolicy: named(RestartPolicySchema, "restart"),
  ReschedulePolicy: named(v.nullable(ReschedulePolicySchema), "reschedule"),
  EphemeralDisk: EphemeralDiskSchema,
  Update: v.nullable(UpdateStrategySchema),
  Migrate: v.nullable(MigrateStrategySchema),
  /** At most one (Nomad's limit for a group). */
  Networks: named(v.array(NetworkResourceSchema), "network"),
  Meta: StringMap,
  Services: named(v.array(ServiceSchema), "service"),
  ShutdownDelay: NullableDuration,
  StopAfterClientDisconnect: NullableDuration,
  /** Nomad 1.3+: how long an unreachable node's allocations count as unknown before lost. */
  MaxClientDisconnect: NullableDuration,
  /** Nomad 1.8+: what happens to allocations on a disconnected node. */
  Disconnect: v.nullable(
    v.strictObject({ LostAfter: Duration, StopOnClientAfter: NullableDuration, Replace: v.nullable(v.boolean()), Reconcile: v.nullable(v.string()) }),
  ),
  PreventRescheduleOnLost: v.boolean(),
  Scaling: v.nullable(ScalingPolicySchema),
  Consul: v.nullable(ConsulSchema),
});
export type TaskGroup = v.InferOutput<typeof TaskGroupSchema>;

export const JobSchema = v.strictObject({
  /** The job block's label, unless an `id` attribute says otherwise. */
  ID: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  Name: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  Namespace: v.string(),
  Region: v.string(),
  ParentID: jsonOnly(v.string()),
  Type: v.picklist(JOB_TYPES),
  Priority: v.pipe(Int, v.minValue(1), v.maxValue(100)),
  AllAtOnce: v.boolean(),
  Datacenters: Strings,
  /** Nomad 1.6+: the node pool the job places in. */
  NodePool: v.string(),
  Constraints: named(v.array(ConstraintSchema), "constraint"),
  Affinities: named(v.array(AffinitySchema), "affinity"),
  TaskGroups: named(annotate(v.array(TaskGroupSchema), { label: "Name" }), "group"),
  Update: v.nullable(UpdateStrategySchema),
  Multiregion: v.nullable(MultiregionSchema),
  Spreads: named(v.array(SpreadSchema), "spread"),
  Periodic: v.nullable(PeriodicConfigSchema),
  ParameterizedJob: named(v.nullable(ParameterizedJobConfigSchema), "parameterized"),
  Dispatched: jsonOnly(v.boolean()),
  /** A dispatched job's input, base64 as Nomad's JSON carries []byte. */
  Payload: jsonOnly(v.nullable(v.string())),
  Reschedule: v.nullable(ReschedulePolicySchema),
  Migrate: v.nullable(MigrateStrategySchema),
  Meta: StringMap,
  /** Nomad 1.8+: the web UI's description and links for the job. */
  UI: named(
    v.nullable(v.strictObject({ Description: v.string(), Links: named(v.nullable(v.array(v.strictObject({ Label: v.string(), URL: named(v.string(), "url") }))), "link") })),
    "ui",
  ),
  ConsulToken: v.string(),
  ConsulNamespace: jsonOnly(v.string()),
  VaultToken: v.string(),
  VaultNamespace: v.string(),
  DispatchIdempotencyToken: jsonOnly(v.string()),
  NomadTokenID: jsonOnly(v.string()),
  /** A stopped job keeps its definition; its allocations are told to stop. */
  Stop: jsonOnly(v.boolean()),
  // Set by the server; ignored in a submitted job.
  Status: jsonOnly(v.picklist(JOB_STATUSES)),
  StatusDescription: jsonOnly(v.string()),
  Stable: jsonOnly(v.boolean()),
  Version: jsonOnly(NonNegativeInt),
  SubmitTime: jsonOnly(UnixNanos),
  CreateIndex: jsonOnly(NonNegativeInt),
  ModifyIndex: jsonOnly(NonNegativeInt),
  JobModifyIndex: jsonOnly(NonNegativeInt),
});
export type Job = v.InferOutput<typeof JobSchema>;

/** The fields the server sets on register; a submitted job's values for them are ignored. */
export const SERVER_SET_JOB_FIELDS = [
  "Status",
  "StatusDescription",
  "Stable",
  "Version",
  "SubmitTime",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
  "NomadTokenID",
] as const satisfies readonly (keyof Job)[];

/** Nomad's per-group counts of allocations by client status (GET /v1/job/:id/summary). */
export const TaskGroupSummarySchema = v.strictObject({
  Queued: NonNegativeInt,
  Complete: NonNegativeInt,
  Failed: NonNegativeInt,
  Running: NonNegativeInt,
  Starting: NonNegativeInt,
  Lost: NonNegativeInt,
  Unknown: NonNegativeInt,
});
export type TaskGroupSummary = v.InferOutput<typeof TaskGroupSummarySchema>;

export const JobSummarySchema = v.strictObject({
  JobID: v.string(),
  Namespace: v.string(),
  Summary: v.record(v.string(), TaskGroupSummarySchema),
  Children: v.strictObject({ Pending: NonNegativeInt, Running: NonNegativeInt, Dead: NonNegativeInt }),
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
});
export type JobSummary = v.InferOutput<typeof JobSummarySchema>;

/** One row of GET /v1/jobs. */
export const JobListStubSchema = v.strictObject({
  ID: v.string(),
  ParentID: v.string(),
  Name: v.string(),
  Namespace: v.string(),
  Datacenters: v.array(v.string()),
  NodePool: v.string(),
  Type: v.picklist(JOB_TYPES),
  Priority: Int,
  Periodic: v.boolean(),
  ParameterizedJob: v.boolean(),
  Stop: v.boolean(),
  Status: v.picklist(JOB_STATUSES),
  StatusDescription: v.string(),
  Version: NonNegativeInt,
  JobSummary: JobSummarySchema,
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
  JobModifyIndex: NonNegativeInt,
  SubmitTime: UnixNanos,
});
export type JobListStub = v.InferOutput<typeof JobListStubSchema>;

/** A periodic job's cron lines: `cron`, then Nomad 1.6's `crons`. */
export function periodicSpecs(periodic: Pick<PeriodicConfig, "Spec" | "Specs">): string[] {
  return [...(periodic.Spec === "" ? [] : [periodic.Spec]), ...(periodic.Specs ?? [])];
}

/** Nomad's Job.IsPeriodic/IsParameterized: a job that launches children instead of running. */
export function launchesChildren(job: Pick<Job, "Periodic" | "ParameterizedJob" | "Dispatched">): boolean {
  return (job.Periodic?.Enabled ?? false) || (job.ParameterizedJob !== null && !job.Dispatched);
}
