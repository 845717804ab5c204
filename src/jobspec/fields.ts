/**
 * The job file's grammar, once: for each block, which HCL names drover reads
 * and the API JSON field each becomes, which Nomad names it refuses, and
 * which values it cannot run. The HCL reader, the API-JSON checker and the
 * error-path translator all walk these tables, so a field is added in one
 * place.
 */
import { SERVER_SET_JOB_FIELDS } from "../structs/job.ts";

export type ValueKind = "string" | "int" | "bool" | "duration" | "strings" | "map";

export type Field =
  | { json: string; kind: ValueKind }
  /** A block written at most once; `array` wraps it in a list (group `network` -> Networks). */
  | { json: string; kind: "block"; level: Level; array?: boolean }
  /** Labelled blocks (`group "web" {}`) -> a list of objects with the label under `labelKey`. */
  | { json: string; kind: "labelled"; level: Level; labelKey: "Name" | "Label" };

/** A Nomad field drover does not implement; refused by name when given a value. */
export interface Unsupported {
  hcl: string;
  json: string;
  what: "block" | "attribute";
}

/** A field whose value drover can run only some of. */
export interface Restricted {
  hcl: string;
  allowed: readonly string[];
}

export interface Level {
  /** How messages name the block: `job "x"`, `task "srv"`, `resources`. */
  name: string;
  labelled: boolean;
  /** Messages name job, group and task blocks alone (`task "srv": ...`); others after their parent. */
  ownContext?: boolean;
  /** HCL name -> field. */
  fields: Readonly<Record<string, Field>>;
  unsupported: readonly Unsupported[];
  /** JSON name -> the values drover runs ("" stands for "not given"). */
  restricted?: Readonly<Record<string, Restricted>>;
  /** API-only JSON fields read as they are (no HCL spelling). */
  jsonOnly?: Readonly<Record<string, Level | "value">>;
  /** API-only JSON fields the server sets or Nomad fills in; dropped from a submitted job. */
  ignored?: readonly string[];
}

const block = (hcl: string, json: string): Unsupported => ({ hcl, json, what: "block" });
const attribute = (hcl: string, json: string): Unsupported => ({ hcl, json, what: "attribute" });

const CONSTRAINTS = [block("constraint", "Constraints"), block("affinity", "Affinities")];

export const PORT: Level = {
  name: "port",
  labelled: true,
  fields: {
    static: { json: "Value", kind: "int" },
    to: { json: "To", kind: "int" },
    host_network: { json: "HostNetwork", kind: "string" },
  },
  unsupported: [],
  restricted: { HostNetwork: { hcl: "host_network", allowed: ["", "default"] } },
};

export const NETWORK: Level = {
  name: "network",
  labelled: false,
  fields: {
    mode: { json: "Mode", kind: "string" },
    // The HCL reader splits these into ReservedPorts (static) and DynamicPorts.
    port: { json: "Ports", kind: "labelled", level: PORT, labelKey: "Label" },
  },
  unsupported: [
    block("dns", "DNS"),
    attribute("hostname", "Hostname"),
    // HCL only: Nomad's JSON MBits (its default 10) is among `ignored` below.
    attribute("mbits", "mbits"),
    block("cni", "CNI"),
  ],
  restricted: { Mode: { hcl: "mode", allowed: ["", "host", "none"] } },
  jsonOnly: { ReservedPorts: PORT, DynamicPorts: PORT, IP: "value" },
  // MBits: Nomad's JSON still carries its default of 10; Nomad no longer schedules on bandwidth either.
  ignored: ["Device", "CIDR", "MBits"],
};

export const EPHEMERAL_DISK: Level = {
  name: "ephemeral_disk",
  labelled: false,
  fields: {
    sticky: { json: "Sticky", kind: "bool" },
    migrate: { json: "Migrate", kind: "bool" },
    size: { json: "SizeMB", kind: "int" },
  },
  unsupported: [],
};

export const RESTART: Level = {
  name: "restart",
  labelled: false,
  fields: {
    attempts: { json: "Attempts", kind: "int" },
    interval: { json: "Interval", kind: "duration" },
    delay: { json: "Delay", kind: "duration" },
    mode: { json: "Mode", kind: "string" },
  },
  unsupported: [attribute("render_templates", "RenderTemplates")],
};

export const RESOURCES: Level = {
  name: "resources",
  labelled: false,
  fields: {
    cpu: { json: "CPU", kind: "int" },
    memory: { json: "MemoryMB", kind: "int" },
    memory_max: { json: "MemoryMaxMB", kind: "int" },
  },
  unsupported: [
    attribute("cores", "Cores"),
    block("device", "Devices"),
    block("network", "Networks"),
    attribute("disk", "DiskMB"),
    attribute("iops", "IOPS"),
    block("numa", "NUMA"),
    attribute("secrets", "SecretsMB"),
  ],
};

export const LOGS: Level = {
  name: "logs",
  labelled: false,
  fields: {
    max_files: { json: "MaxFiles", kind: "int" },
    max_file_size: { json: "MaxFileSizeMB", kind: "int" },
  },
  unsupported: [attribute("disabled", "Disabled"), attribute("enabled", "Enabled")],
};

export const LIFECYCLE: Level = {
  name: "lifecycle",
  labelled: false,
  fields: {
    hook: { json: "Hook", kind: "string" },
    sidecar: { json: "Sidecar", kind: "bool" },
  },
  unsupported: [],
};

/** raw_exec's and exec's `config`; the drivers check the values of keys beyond command and args. */
export const DRIVER_CONFIG: Level = {
  name: "config",
  labelled: false,
  fields: {
    command: { json: "command", kind: "string" },
    args: { json: "args", kind: "strings" },
    pids_limit: { json: "pids_limit", kind: "int" },
    syscall_add: { json: "syscall_add", kind: "strings" },
  },
  unsupported: [
    attribute("pid_mode", "pid_mode"),
    attribute("ipc_mode", "ipc_mode"),
    attribute("cap_add", "cap_add"),
    attribute("cap_drop", "cap_drop"),
    attribute("work_dir", "work_dir"),
  ],
};

export const TASK: Level = {
  name: "task",
  labelled: true,
  ownContext: true,
  fields: {
    driver: { json: "Driver", kind: "string" },
    user: { json: "User", kind: "string" },
    config: { json: "Config", kind: "block", level: DRIVER_CONFIG },
    env: { json: "Env", kind: "map" },
    meta: { json: "Meta", kind: "map" },
    resources: { json: "Resources", kind: "block", level: RESOURCES },
    restart: { json: "RestartPolicy", kind: "block", level: RESTART },
    logs: { json: "LogConfig", kind: "block", level: LOGS },
    kill_timeout: { json: "KillTimeout", kind: "duration" },
    kill_signal: { json: "KillSignal", kind: "string" },
    leader: { json: "Leader", kind: "bool" },
    lifecycle: { json: "Lifecycle", kind: "block", level: LIFECYCLE },
  },
  unsupported: [
    ...CONSTRAINTS,
    block("service", "Services"),
    block("artifact", "Artifacts"),
    block("template", "Templates"),
    block("vault", "Vault"),
    block("consul", "Consul"),
    block("dispatch_payload", "DispatchPayload"),
    block("volume_mount", "VolumeMounts"),
    block("csi_plugin", "CSIPluginConfig"),
    block("scaling", "ScalingPolicies"),
    block("identity", "Identities"),
    block("identity", "Identity"),
    block("action", "Actions"),
    block("schedule", "Schedule"),
    attribute("shutdown_delay", "ShutdownDelay"),
    attribute("kind", "Kind"),
  ],
  restricted: { Driver: { hcl: "driver", allowed: ["raw_exec", "exec"] } },
};

export const GROUP: Level = {
  name: "group",
  labelled: true,
  ownContext: true,
  fields: {
    count: { json: "Count", kind: "int" },
    meta: { json: "Meta", kind: "map" },
    restart: { json: "RestartPolicy", kind: "block", level: RESTART },
    ephemeral_disk: { json: "EphemeralDisk", kind: "block", level: EPHEMERAL_DISK },
    network: { json: "Networks", kind: "block", level: NETWORK, array: true },
    task: { json: "Tasks", kind: "labelled", level: TASK, labelKey: "Name" },
  },
  unsupported: [
    ...CONSTRAINTS,
    block("spread", "Spreads"),
    block("volume", "Volumes"),
    block("reschedule", "ReschedulePolicy"),
    block("update", "Update"),
    block("migrate", "Migrate"),
    block("service", "Services"),
    block("scaling", "Scaling"),
    block("consul", "Consul"),
    block("vault", "Vault"),
    block("disconnect", "Disconnect"),
    attribute("shutdown_delay", "ShutdownDelay"),
    attribute("stop_after_client_disconnect", "StopAfterClientDisconnect"),
    attribute("max_client_disconnect", "MaxClientDisconnect"),
    attribute("prevent_reschedule_on_lost", "PreventRescheduleOnLost"),
  ],
};

export const JOB: Level = {
  name: "job",
  labelled: true,
  ownContext: true,
  fields: {
    name: { json: "Name", kind: "string" },
    namespace: { json: "Namespace", kind: "string" },
    region: { json: "Region", kind: "string" },
    type: { json: "Type", kind: "string" },
    priority: { json: "Priority", kind: "int" },
    datacenters: { json: "Datacenters", kind: "strings" },
    meta: { json: "Meta", kind: "map" },
    group: { json: "TaskGroups", kind: "labelled", level: GROUP, labelKey: "Name" },
  },
  unsupported: [
    ...CONSTRAINTS,
    block("spread", "Spreads"),
    block("update", "Update"),
    block("migrate", "Migrate"),
    block("reschedule", "Reschedule"),
    block("periodic", "Periodic"),
    block("parameterized", "ParameterizedJob"),
    block("multiregion", "Multiregion"),
    block("vault", "Vault"),
    block("consul", "Consul"),
    block("ui", "UI"),
    attribute("all_at_once", "AllAtOnce"),
    attribute("vault_token", "VaultToken"),
    attribute("consul_token", "ConsulToken"),
    attribute("vault_namespace", "VaultNamespace"),
    attribute("consul_namespace", "ConsulNamespace"),
    attribute("node_pool", "NodePool"),
  ],
  restricted: {
    Type: { hcl: "type", allowed: ["service", "batch"] },
    Namespace: { hcl: "namespace", allowed: ["", "default"] },
  },
  jsonOnly: { ID: "value", Stop: "value" },
  ignored: [
    ...SERVER_SET_JOB_FIELDS,
    "Stable",
    "Dispatched",
    "ParentID",
    "NomadTokenID",
    "Payload",
    "VersionTag",
  ],
};

/** The HCL name of a JSON field in `level`, if it has one. */
export function hclName(level: Level, json: string): string | undefined {
  for (const [hcl, field] of Object.entries(level.fields)) if (field.json === json) return hcl;
  return undefined;
}

/** The levels nested under a JSON field of `level` (blocks and labelled blocks). */
export function childLevel(level: Level, json: string): Level | undefined {
  for (const field of Object.values(level.fields)) {
    if (field.json === json && (field.kind === "block" || field.kind === "labelled")) return field.level;
  }
  const only = level.jsonOnly?.[json];
  return only === undefined || only === "value" ? undefined : only;
}

/** How a message names one block: `task "srv"` for labelled blocks, `resources` otherwise. */
export function blockName(level: Level, label?: string): string {
  return level.labelled && label !== undefined ? `${level.name} "${label}"` : level.name;
}

/** The context messages give a block: `task "srv"`, or `task "srv": resources` below it. */
export function blockContext(parent: string, level: Level, label?: string): string {
  const own = blockName(level, label);
  return level.ownContext || parent === "" ? own : `${parent}: ${own}`;
}

export function unsupportedMessage(context: string, entry: Unsupported): string {
  return `${context}: the "${entry.hcl}" ${entry.what} is not supported by drover`;
}

export function restrictedMessage(context: string, rule: Restricted, value: string): string {
  const allowed = rule.allowed.filter((item) => item !== "").map((item) => `"${item}"`);
  return `${context}: ${rule.hcl} "${value}" is not supported by drover (use ${allowed.join(" or ")})`;
}
