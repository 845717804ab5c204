/**
 * Nomad's defaults for a submitted job (its api Canonicalize), applied to the
 * API JSON before it is parsed, so a stored job states every value a task
 * runs with. Only missing (undefined or null) fields are filled; a value of
 * the wrong type is left for the schema to name.
 */
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../lib/log-config.ts";
import { NS_PER_SECOND } from "../lib/units.ts";
import type { JobType } from "../structs/job.ts";

type Json = Record<string, unknown>;

const SECOND_NS = NS_PER_SECOND;

/** Nomad's DefaultServiceJobRestartPolicy and DefaultBatchJobRestartPolicy. */
export const DEFAULT_RESTART_POLICY: Readonly<Record<JobType, Json>> = {
  service: { Attempts: 2, Interval: 30 * 60 * SECOND_NS, Delay: 15 * SECOND_NS, Mode: "fail" },
  batch: { Attempts: 3, Interval: 24 * 3600 * SECOND_NS, Delay: 15 * SECOND_NS, Mode: "fail" },
};

/** Nomad's DefaultResources: what a task reserves when it says nothing. */
export const DEFAULT_RESOURCES = { CPU: 100, MemoryMB: 300, MemoryMaxMB: 0 } as const;
export const DEFAULT_LOG_CONFIG = { MaxFiles: DEFAULT_LOG_MAX_FILES, MaxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB } as const;
export const DEFAULT_EPHEMERAL_DISK = { Sticky: false, Migrate: false, SizeMB: 300 } as const;
export const DEFAULT_KILL_TIMEOUT_NS = 5 * SECOND_NS;
export const DEFAULT_PRIORITY = 50;
export const DEFAULT_REGION = "global";
/** Nomad 1.5+: a job without datacenters may run in any. */
export const DEFAULT_DATACENTERS = ["*"] as const;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** `base` overlaid with the fields `over` sets (Nomad's RestartPolicy.Merge, and the like). */
function merged(base: Json, over: unknown): Json {
  if (!isObject(over)) return { ...base };
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) if (value !== undefined && value !== null) out[key] = value;
  return out;
}

function fill(target: Json, defaults: Json): void {
  for (const [key, value] of Object.entries(defaults)) {
    if (target[key] === undefined || target[key] === null) target[key] = value;
  }
}

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function canonicalizePort(port: Json): void {
  fill(port, { Value: 0, To: 0, HostNetwork: "default" });
  if (port.HostNetwork === "") port.HostNetwork = "default";
}

function canonicalizeNetwork(network: Json): void {
  fill(network, { Mode: "host", IP: "", ReservedPorts: [], DynamicPorts: [] });
  if (network.Mode === "") network.Mode = "host";
  for (const port of [...objects(network.ReservedPorts), ...objects(network.DynamicPorts)]) canonicalizePort(port);
}

function canonicalizeTask(task: Json, groupRestart: Json): void {
  fill(task, { User: "", Env: {}, Meta: {}, KillTimeout: DEFAULT_KILL_TIMEOUT_NS, KillSignal: "", Leader: false, Lifecycle: null });
  if (isObject(task.Config)) fill(task.Config, { args: [] });
  task.Resources = merged(DEFAULT_RESOURCES, task.Resources);
  task.LogConfig = merged(DEFAULT_LOG_CONFIG, task.LogConfig);
  task.RestartPolicy = merged(groupRestart, task.RestartPolicy);
  // Nomad drops a lifecycle block without a hook.
  if (isObject(task.Lifecycle)) {
    if (task.Lifecycle.Hook === undefined || task.Lifecycle.Hook === null || task.Lifecycle.Hook === "") task.Lifecycle = null;
    else fill(task.Lifecycle, { Sidecar: false });
  }
}

function canonicalizeGroup(group: Json, jobType: JobType): void {
  fill(group, { Count: 1, Meta: {}, Networks: [] });
  group.EphemeralDisk = merged(DEFAULT_EPHEMERAL_DISK, group.EphemeralDisk);
  group.RestartPolicy = merged(DEFAULT_RESTART_POLICY[jobType], group.RestartPolicy);
  for (const network of objects(group.Networks)) canonicalizeNetwork(network);
  for (const task of objects(group.Tasks)) canonicalizeTask(task, group.RestartPolicy as Json);
}

/** A copy of the API-JSON `job` with Nomad's defaults filled in. */
export function applyJobDefaults(job: Json): Json {
  const out = structuredClone(job);
  fill(out, {
    Name: out.ID,
    Namespace: "default",
    Region: DEFAULT_REGION,
    Type: "service",
    Priority: DEFAULT_PRIORITY,
    Datacenters: [...DEFAULT_DATACENTERS],
    Meta: {},
    Stop: false,
    // Placeholders the server overwrites on register.
    Status: "pending",
    StatusDescription: "",
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  });
  if (out.Namespace === "") out.Namespace = "default";
  const jobType: JobType = out.Type === "batch" ? "batch" : "service";
  for (const group of objects(out.TaskGroups)) canonicalizeGroup(group, jobType);
  return out;
}
