/**
 * Nomad's defaults for a submitted job (its api Canonicalize, v0.12), applied
 * to the API JSON before it is parsed, so a stored job states every value a
 * task runs with. Only missing (undefined or null) fields are filled; a
 * value of the wrong type is left for the schema to name. Lists and maps
 * Nomad leaves nil become empty; optional blocks Nomad leaves nil stay null.
 */
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../lib/log-config.ts";
import { NS_PER_SECOND } from "../lib/units.ts";
import { DEFAULT_MIGRATE_STRATEGY, HORIZONTAL_SCALING } from "../structs/job.ts";
import { DEFAULT_NODE_POOL } from "../structs/node-pool.ts";

type Json = Record<string, unknown>;

const SECOND_NS = NS_PER_SECOND;
const MINUTE_NS = 60 * SECOND_NS;
const HOUR_NS = 60 * MINUTE_NS;

type Kind = "service" | "batch" | "system";
const kindOf = (type: unknown): Kind => (type === "batch" || type === "sysbatch" ? "batch" : type === "system" ? "system" : "service");

/** Nomad's DefaultServiceJobRestartPolicy and DefaultBatchJobRestartPolicy (system jobs take the service one). */
export const DEFAULT_RESTART_POLICY: Readonly<Record<Kind, Json>> = {
  service: { Attempts: 2, Interval: 30 * MINUTE_NS, Delay: 15 * SECOND_NS, Mode: "fail" },
  batch: { Attempts: 3, Interval: 24 * HOUR_NS, Delay: 15 * SECOND_NS, Mode: "fail" },
  system: { Attempts: 2, Interval: 30 * MINUTE_NS, Delay: 15 * SECOND_NS, Mode: "fail" },
};

/** Nomad's NewDefaultReschedulePolicy. */
const DEFAULT_RESCHEDULE_POLICY: Readonly<Record<Kind, Json>> = {
  service: { Attempts: 0, Interval: 0, Delay: 30 * SECOND_NS, DelayFunction: "exponential", MaxDelay: HOUR_NS, Unlimited: true },
  batch: { Attempts: 1, Interval: 24 * HOUR_NS, Delay: 5 * SECOND_NS, DelayFunction: "constant", MaxDelay: 0, Unlimited: false },
  system: { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: "", MaxDelay: 0, Unlimited: false },
};

/** Nomad's DefaultUpdateStrategy. */
export const DEFAULT_UPDATE_STRATEGY = {
  Stagger: 30 * SECOND_NS,
  MaxParallel: 1,
  HealthCheck: "checks",
  MinHealthyTime: 10 * SECOND_NS,
  HealthyDeadline: 5 * MINUTE_NS,
  ProgressDeadline: 10 * MINUTE_NS,
  Canary: 0,
  AutoRevert: false,
  AutoPromote: false,
} as const;

/** Nomad's DefaultMigrateStrategy. */

/** Nomad's DefaultResources: what a task reserves when it says nothing. */
export const DEFAULT_RESOURCES = { CPU: 100, Cores: 0, MemoryMB: 300, MemoryMaxMB: 0, DiskMB: null, IOPS: null } as const;
export const DEFAULT_LOG_CONFIG = { MaxFiles: DEFAULT_LOG_MAX_FILES, MaxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB } as const;
export const DEFAULT_EPHEMERAL_DISK = { Sticky: false, Migrate: false, SizeMB: 300 } as const;
export const DEFAULT_KILL_TIMEOUT_NS = 5 * SECOND_NS;
export const DEFAULT_PRIORITY = 50;
export const DEFAULT_REGION = "global";
/** Nomad 1.5+: a job without datacenters may run in any. */
export const DEFAULT_DATACENTERS = ["*"] as const;
/** Nomad's NetworkResource.Canonicalize: MBits defaults to 10 (no longer scheduled on). */
const DEFAULT_MBITS = 10;
/** A template's splay: the most a re-render waits at random before acting (Nomad's 5s). */
const DEFAULT_TEMPLATE_SPLAY_NS = 5 * SECOND_NS;
/** check_restart's grace: how long after a (re)start failing checks do not count (Nomad's 1s). */
const DEFAULT_CHECK_RESTART_GRACE_NS = SECOND_NS;
/** A template's change_script timeout when it gives none (Nomad's 5s). */
const DEFAULT_CHANGE_SCRIPT_TIMEOUT_NS = 5 * SECOND_NS;
/** The Consul and Vault cluster a block without one names (Nomad 1.7+). */
const DEFAULT_CLUSTER = "default";
/** A service's (and so its checks') deployment behaviour when it says nothing (Nomad 1.1+). */
const DEFAULT_ON_UPDATE = "require_healthy";
/** Nomad's default service provider: its services go to Consul unless they say "nomad". */
const DEFAULT_SERVICE_PROVIDER = "consul";
/** The `disconnect` block's defaults (Nomad 1.8+). */
const DEFAULT_DISCONNECT = { Replace: true, Reconcile: "best_score" } as const;
/** Nomad's csi_plugin defaults: where the plugin stages volumes, and how long it has to turn healthy. */
const DEFAULT_CSI_STAGE_PUBLISH_BASE_DIR = "/local/csi";
const DEFAULT_CSI_HEALTH_TIMEOUT_NS = 30 * SECOND_NS;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const missing = (value: unknown) => value === undefined || value === null;

/** `base` overlaid with the fields `over` sets (Nomad's RestartPolicy.Merge, and the like). */
function merged(base: Json, over: unknown): Json {
  if (!isObject(over)) return { ...base };
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) if (!missing(value)) out[key] = value;
  return out;
}

function fill(target: Json, defaults: Json): void {
  for (const [key, value] of Object.entries(defaults)) {
    if (missing(target[key])) target[key] = value;
  }
}

/** Lists Nomad leaves nil, as empty lists; optional blocks as null. */
function lists(target: Json, ...keys: string[]): void {
  for (const key of keys) if (missing(target[key])) target[key] = [];
}
function maps(target: Json, ...keys: string[]): void {
  for (const key of keys) if (missing(target[key])) target[key] = {};
}
function nulls(target: Json, ...keys: string[]): void {
  for (const key of keys) if (target[key] === undefined) target[key] = null;
}

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function canonicalizeConstraints(target: Json): void {
  lists(target, "Constraints", "Affinities");
  for (const constraint of objects(target.Constraints)) fill(constraint, { LTarget: "", RTarget: "", Operand: "" });
  for (const affinity of objects(target.Affinities)) fill(affinity, { LTarget: "", RTarget: "", Operand: "", Weight: 50 });
}

function canonicalizeSpreads(target: Json): void {
  lists(target, "Spreads");
  for (const spread of objects(target.Spreads)) {
    fill(spread, { Attribute: "", Weight: 50, SpreadTarget: [] });
    for (const item of objects(spread.SpreadTarget)) fill(item, { Value: "", Percent: 0 });
  }
}

function canonicalizePort(port: Json): void {
  fill(port, { Label: "", Value: 0, To: 0, HostNetwork: "default" });
  if (port.HostNetwork === "") port.HostNetwork = "default";
}

function canonicalizeNetwork(network: Json): void {
  fill(network, { Mode: "host", Device: "", CIDR: "", IP: "", MBits: DEFAULT_MBITS, ReservedPorts: [], DynamicPorts: [] });
  nulls(network, "DNS");
  if (network.Mode === "") network.Mode = "host";
  if (isObject(network.DNS)) lists(network.DNS, "Servers", "Searches", "Options");
  for (const port of [...objects(network.ReservedPorts), ...objects(network.DynamicPorts)]) canonicalizePort(port);
}

function canonicalizeResources(resources: Json): Json {
  // Nomad's Resources.Canonicalize: a task that reserves whole cores reserves no MHz unless it says so.
  const cores = typeof resources.Cores === "number" && resources.Cores > 0;
  const out = merged(cores ? { ...DEFAULT_RESOURCES, CPU: 0 } : DEFAULT_RESOURCES, resources);
  if (isObject(out.NUMA) && missing(out.NUMA.Affinity)) out.NUMA.Affinity = "none";
  lists(out, "Networks", "Devices");
  for (const network of objects(out.Networks)) canonicalizeNetwork(network);
  for (const device of objects(out.Devices)) {
    fill(device, { Name: "", Count: 1 });
    canonicalizeConstraints(device);
  }
  return out;
}

function canonicalizeCheckRestart(value: unknown): Json | null {
  if (!isObject(value)) return null;
  return merged({ Limit: 0, Grace: DEFAULT_CHECK_RESTART_GRACE_NS, IgnoreWarnings: false }, value);
}

function canonicalizeService(service: Json, defaultName: string): void {
  fill(service, { Id: "", Name: "", PortLabel: "", AddressMode: "", EnableTagOverride: false, TaskName: "" });
  if (service.Name === "") service.Name = defaultName;
  if (service.AddressMode === "") service.AddressMode = "auto";
  if (missing(service.OnUpdate) || service.OnUpdate === "") service.OnUpdate = DEFAULT_ON_UPDATE;
  if (missing(service.Provider) || service.Provider === "") service.Provider = DEFAULT_SERVICE_PROVIDER;
  if (missing(service.Cluster) || service.Cluster === "") service.Cluster = DEFAULT_CLUSTER;
  if (isObject(service.TaggedAddresses) && Object.keys(service.TaggedAddresses).length === 0) service.TaggedAddresses = null;
  if (isObject(service.Weights)) {
    for (const key of ["Passing", "Warning"]) if (!(typeof service.Weights[key] === "number" && service.Weights[key] > 0)) service.Weights[key] = 1;
  }
  if (isObject(service.Connect)) canonicalizeConnect(service.Connect);
  lists(service, "Tags", "CanaryTags", "Checks");
  maps(service, "Meta", "CanaryMeta");
  nulls(service, "Connect");
  service.CheckRestart = isObject(service.CheckRestart) ? service.CheckRestart : null;
  for (const check of objects(service.Checks)) {
    fill(check, {
      Id: "",
      Name: "",
      Type: "",
      Command: "",
      Path: "",
      Protocol: "",
      PortLabel: "",
      Expose: false,
      AddressMode: "",
      Interval: 0,
      Timeout: 0,
      InitialStatus: "",
      TLSSkipVerify: false,
      Method: "",
      GRPCService: "",
      GRPCUseTLS: false,
      TaskName: "",
      SuccessBeforePassing: 0,
      FailuresBeforeCritical: 0,
    });
    if (missing(check.OnUpdate) || check.OnUpdate === "") check.OnUpdate = service.OnUpdate;
    lists(check, "Args");
    maps(check, "Header");
    // Nomad's CheckRestart.Merge: the check's own fields over the service's.
    const both = isObject(service.CheckRestart) || isObject(check.CheckRestart) ? merged(isObject(service.CheckRestart) ? service.CheckRestart : {}, check.CheckRestart) : null;
    check.CheckRestart = canonicalizeCheckRestart(both);
  }
  if (isObject(service.CheckRestart)) service.CheckRestart = canonicalizeCheckRestart(service.CheckRestart);
}

/**
 * Connect's two spellings of one block: Nomad 0.12's ExposeConfig.Path and
 * 1.x's Expose.Paths, both stated so either reader finds it; a gateway's
 * bind addresses carry their key as Name, as Nomad 1.x's do.
 */
function canonicalizeConnect(connect: Json): void {
  const proxy = isObject(connect.SidecarService) && isObject(connect.SidecarService.Proxy) ? connect.SidecarService.Proxy : undefined;
  if (proxy) {
    const paths = isObject(proxy.ExposeConfig) ? proxy.ExposeConfig.Path : isObject(proxy.Expose) ? proxy.Expose.Paths : undefined;
    if (paths !== undefined) {
      proxy.ExposeConfig = { ...(isObject(proxy.ExposeConfig) ? proxy.ExposeConfig : {}), Path: paths };
      proxy.Expose = { ...(isObject(proxy.Expose) ? proxy.Expose : {}), Paths: paths };
    }
  }
  // Nomad's SidecarTask.Canonicalize: the sidecar runs with a task's defaults.
  if (isObject(connect.SidecarTask)) {
    const sidecar = connect.SidecarTask;
    sidecar.Resources = canonicalizeResources(isObject(sidecar.Resources) ? sidecar.Resources : {});
    sidecar.LogConfig = merged(DEFAULT_LOG_CONFIG, sidecar.LogConfig);
    fill(sidecar, { KillTimeout: DEFAULT_KILL_TIMEOUT_NS, ShutdownDelay: 0 });
    for (const mount of objects(sidecar.VolumeMounts)) canonicalizeVolumeMount(mount);
  }
  const gatewayProxy = isObject(connect.Gateway) && isObject(connect.Gateway.Proxy) ? connect.Gateway.Proxy : undefined;
  if (gatewayProxy && isObject(gatewayProxy.EnvoyGatewayBindAddresses)) {
    for (const [name, address] of Object.entries(gatewayProxy.EnvoyGatewayBindAddresses)) if (isObject(address)) fill(address, { Name: name });
  }
}

function canonicalizeVolumeMount(mount: Json): void {
  fill(mount, { Volume: "", Destination: "", ReadOnly: false, PropagationMode: "private", SELinuxLabel: "" });
}

function canonicalizeArtifact(artifact: Json): void {
  fill(artifact, { GetterSource: "", GetterMode: "any" });
  maps(artifact, "GetterOptions");
  if (isObject(artifact.GetterHeaders) && Object.keys(artifact.GetterHeaders).length === 0) artifact.GetterHeaders = null;
  if (missing(artifact.RelativeDest)) {
    const source = typeof artifact.GetterSource === "string" ? artifact.GetterSource : "";
    const base = source.split("?")[0]!.replace(/\/+$/, "").split("/").pop() ?? "";
    artifact.RelativeDest = artifact.GetterMode === "file" ? `local/${base}` : "local/";
  }
}

function canonicalizeTemplate(template: Json): void {
  fill(template, { SourcePath: "", DestPath: "", EmbeddedTmpl: "", ChangeMode: "restart" });
  if (missing(template.ChangeSignal)) template.ChangeSignal = template.ChangeMode === "signal" ? "SIGHUP" : "";
  else if (typeof template.ChangeSignal === "string") template.ChangeSignal = template.ChangeSignal.toUpperCase();
  fill(template, { Splay: DEFAULT_TEMPLATE_SPLAY_NS, Perms: "0644", LeftDelim: "{{", RightDelim: "}}", Envvars: false, VaultGrace: 0 });
  if (isObject(template.ChangeScript)) {
    fill(template.ChangeScript, { Command: "", Timeout: DEFAULT_CHANGE_SCRIPT_TIMEOUT_NS, FailOnError: false });
    lists(template.ChangeScript, "Args");
  }
}

function canonicalizeTask(task: Json, group: Json, job: Json): void {
  fill(task, { User: "", KillTimeout: DEFAULT_KILL_TIMEOUT_NS, KillSignal: "", Leader: false, ShutdownDelay: 0, Kind: "" });
  maps(task, "Env", "Meta", "Config");
  nulls(task, "Lifecycle", "Vault", "DispatchPayload", "CSIPluginConfig", "Identity");
  if (isObject(task.Identity)) fill(task.Identity, { Env: false, File: false });
  canonicalizeConstraints(task);
  lists(task, "Services", "Artifacts", "Templates", "VolumeMounts");
  task.Resources = canonicalizeResources(isObject(task.Resources) ? task.Resources : {});
  task.LogConfig = merged(DEFAULT_LOG_CONFIG, task.LogConfig);
  task.RestartPolicy = merged(group.RestartPolicy as Json, task.RestartPolicy);
  for (const artifact of objects(task.Artifacts)) canonicalizeArtifact(artifact);
  for (const template of objects(task.Templates)) canonicalizeTemplate(template);
  for (const service of objects(task.Services)) canonicalizeService(service, `${String(job.Name)}-${String(group.Name)}-${String(task.Name)}`);
  for (const mount of objects(task.VolumeMounts)) canonicalizeVolumeMount(mount);
  if (isObject(task.Vault)) {
    fill(task.Vault, { Env: true, Namespace: "", ChangeMode: "restart", ChangeSignal: "SIGHUP" });
    if (missing(task.Vault.Cluster) || task.Vault.Cluster === "") task.Vault.Cluster = DEFAULT_CLUSTER;
    lists(task.Vault, "Policies");
  }
  canonicalizeConsul(task.Consul);
  for (const policy of objects(task.ScalingPolicies)) fill(policy, { Enabled: true });
  for (const action of objects(task.Actions)) lists(action, "Args");
  if (isObject(task.CSIPluginConfig)) {
    fill(task.CSIPluginConfig, { ID: "", Type: "", MountDir: "" });
    if (task.CSIPluginConfig.MountDir === "") task.CSIPluginConfig.MountDir = "/csi";
    // Nomad's TaskCSIPluginConfig.Canonicalize.
    if (missing(task.CSIPluginConfig.StagePublishBaseDir) || task.CSIPluginConfig.StagePublishBaseDir === "") {
      task.CSIPluginConfig.StagePublishBaseDir = DEFAULT_CSI_STAGE_PUBLISH_BASE_DIR;
    }
    if (missing(task.CSIPluginConfig.HealthTimeout) || task.CSIPluginConfig.HealthTimeout === 0) task.CSIPluginConfig.HealthTimeout = DEFAULT_CSI_HEALTH_TIMEOUT_NS;
  }
  if (isObject(task.DispatchPayload)) fill(task.DispatchPayload, { File: "" });
  // Nomad drops a lifecycle block without a hook.
  if (isObject(task.Lifecycle)) {
    if (missing(task.Lifecycle.Hook) || task.Lifecycle.Hook === "") task.Lifecycle = null;
    else fill(task.Lifecycle, { Sidecar: false });
  }
}

/** Nomad's Consul.Canonicalize: the default cluster when none is named. */
function canonicalizeConsul(consul: unknown): void {
  if (isObject(consul) && (missing(consul.Cluster) || consul.Cluster === "")) consul.Cluster = DEFAULT_CLUSTER;
}

/** Nomad's UpdateStrategy.Empty: a block that sets nothing. */
function updateIsEmpty(update: Json): boolean {
  return Object.values(update).every((value) => missing(value) || value === 0 || value === "" || value === false);
}

function canonicalizeGroup(group: Json, job: Json): void {
  const kind = kindOf(job.Type);
  fill(group, { Name: "" });
  // Nomad's own `job run -output` JSON says "Count": null for a group without a count: it means 1.
  if (missing(group.Count)) {
    const min = isObject(group.Scaling) ? group.Scaling.Min : undefined;
    group.Count = typeof min === "number" ? min : 1;
  }
  if (isObject(group.Scaling)) {
    fill(group.Scaling, { ID: "", Namespace: "", Min: group.Count, Enabled: true, Policy: null, CreateIndex: 0, ModifyIndex: 0 });
    if (missing(group.Scaling.Type) || group.Scaling.Type === "") group.Scaling.Type = HORIZONTAL_SCALING;
    maps(group.Scaling, "Target");
  }
  canonicalizeConsul(group.Consul);
  if (isObject(group.Disconnect)) fill(group.Disconnect, DEFAULT_DISCONNECT);
  nulls(group, "Scaling", "ShutdownDelay", "StopAfterClientDisconnect");
  maps(group, "Meta", "Volumes");
  lists(group, "Networks", "Services");
  canonicalizeConstraints(group);
  canonicalizeSpreads(group);
  group.EphemeralDisk = merged(DEFAULT_EPHEMERAL_DISK, group.EphemeralDisk);

  const jobUpdate = isObject(job.Update) ? job.Update : undefined;
  if (jobUpdate && isObject(group.Update)) group.Update = merged(jobUpdate, group.Update);
  else if (jobUpdate && !updateIsEmpty(jobUpdate)) group.Update = { ...jobUpdate };
  group.Update = isObject(group.Update) ? merged(DEFAULT_UPDATE_STRATEGY, group.Update) : null;

  const jobReschedule = isObject(job.Reschedule) ? job.Reschedule : undefined;
  let reschedule = jobReschedule ? merged(jobReschedule, group.ReschedulePolicy) : isObject(group.ReschedulePolicy) ? group.ReschedulePolicy : undefined;
  if (!reschedule && kind !== "system") reschedule = {};
  group.ReschedulePolicy = reschedule ? merged(DEFAULT_RESCHEDULE_POLICY[kind], reschedule) : null;

  const jobMigrate = isObject(job.Migrate) ? job.Migrate : undefined;
  let migrate = jobMigrate ? merged(jobMigrate, group.Migrate) : isObject(group.Migrate) ? group.Migrate : undefined;
  if (!migrate && job.Type === "service") migrate = {};
  group.Migrate = migrate ? merged(DEFAULT_MIGRATE_STRATEGY, migrate) : null;

  group.RestartPolicy = merged(DEFAULT_RESTART_POLICY[kind], group.RestartPolicy);
  if (isObject(group.Volumes)) {
    for (const [name, volume] of Object.entries(group.Volumes)) {
      if (!isObject(volume)) continue;
      fill(volume, { Name: name, Type: "", Source: "", ReadOnly: false });
      nulls(volume, "MountOptions");
    }
  }
  for (const network of objects(group.Networks)) canonicalizeNetwork(network);
  for (const service of objects(group.Services)) canonicalizeService(service, `${String(job.Name)}-${String(group.Name)}`);
  for (const task of objects(group.Tasks)) canonicalizeTask(task, group, job);
}

/** A copy of the API-JSON `job` with Nomad's defaults filled in. */
export function applyJobDefaults(job: Json): Json {
  const out = structuredClone(job);
  fill(out, {
    Name: out.ID,
    ParentID: "",
    Namespace: "default",
    Region: DEFAULT_REGION,
    Type: "service",
    Priority: DEFAULT_PRIORITY,
    AllAtOnce: false,
    Datacenters: [...DEFAULT_DATACENTERS],
    NodePool: DEFAULT_NODE_POOL,
    Dispatched: false,
    ConsulToken: "",
    VaultToken: "",
    VaultNamespace: "",
    NomadTokenID: "",
    Stop: false,
    // Placeholders the server overwrites on register.
    Status: "pending",
    StatusDescription: "",
    Stable: false,
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  });
  maps(out, "Meta");
  nulls(out, "Payload", "Multiregion", "Periodic", "ParameterizedJob", "Reschedule", "Migrate");
  if (out.Namespace === "") out.Namespace = "default";
  if (out.NodePool === "") out.NodePool = DEFAULT_NODE_POOL;
  if (out.Status === "") out.Status = "pending";
  canonicalizeConstraints(out);
  canonicalizeSpreads(out);
  if (isObject(out.Periodic)) {
    fill(out.Periodic, { Enabled: true, Spec: "", Specs: null, SpecType: "cron", ProhibitOverlap: false, TimeZone: "" });
    if (out.Periodic.TimeZone === "") out.Periodic.TimeZone = "UTC";
  }
  if (isObject(out.ParameterizedJob)) {
    fill(out.ParameterizedJob, { Payload: "" });
    lists(out.ParameterizedJob, "MetaRequired", "MetaOptional");
  }
  if (isObject(out.Update)) out.Update = merged(DEFAULT_UPDATE_STRATEGY, out.Update);
  else if (out.Type === "service") out.Update = { ...DEFAULT_UPDATE_STRATEGY };
  else out.Update = null;
  if (isObject(out.Multiregion)) {
    out.Multiregion.Strategy = merged({ MaxParallel: 0, OnFailure: "" }, out.Multiregion.Strategy);
    lists(out.Multiregion, "Regions");
    for (const region of objects(out.Multiregion.Regions)) {
      fill(region, { Name: "", Count: 1 });
      lists(region, "Datacenters");
      maps(region, "Meta");
    }
  }
  for (const group of objects(out.TaskGroups)) canonicalizeGroup(group, out);
  // Nomad leaves the job's own blocks partial (its groups get them merged); drover states every value.
  const kind = kindOf(out.Type);
  if (isObject(out.Reschedule)) out.Reschedule = merged(DEFAULT_RESCHEDULE_POLICY[kind], out.Reschedule);
  if (isObject(out.Migrate)) out.Migrate = merged(DEFAULT_MIGRATE_STRATEGY, out.Migrate);
  return out;
}
