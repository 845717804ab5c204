/**
 * A job as the server stores and serves it: Nomad's API JSON (field names,
 * nesting, nanosecond durations), limited to what drover runs. Every field is
 * present: src/jobspec/api-job.ts applies Nomad's defaults before parsing, so
 * a consumer never guesses a default. Cross-field rules (unique names, the
 * restart policy's arithmetic, log storage against the disk) live in
 * src/jobspec/validate.ts.
 */
import * as v from "valibot";
import { LogMaxFileSizeMbSchema, LogMaxFilesSchema } from "../lib/log-config.ts";
import { Int, Nanoseconds, NonNegativeInt, StringMap, UnixNanos } from "./common.ts";

export const JOB_TYPES = ["service", "batch"] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const DRIVERS = ["raw_exec", "exec"] as const;
export type DriverName = (typeof DRIVERS)[number];

export const RESTART_MODES = ["fail", "delay"] as const;
export const NETWORK_MODES = ["host", "none"] as const;
export const LIFECYCLE_HOOKS = ["prestart", "poststart", "poststop"] as const;
export const JOB_STATUSES = ["pending", "running", "dead"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The only namespace a single-node drover has (Nomad's default). */
export const DEFAULT_NAMESPACE = "default";

/** Port labels become NOMAD_PORT_<label>, so they must be valid in a variable name. */
export const PORT_LABEL = /^[a-zA-Z0-9_]+$/;

export const RestartPolicySchema = v.strictObject({
  Attempts: NonNegativeInt,
  Interval: Nanoseconds,
  Delay: Nanoseconds,
  Mode: v.picklist(RESTART_MODES),
});
export type RestartPolicy = v.InferOutput<typeof RestartPolicySchema>;

export const ResourcesSchema = v.strictObject({
  /** MHz. Nomad's minimum is 1. */
  CPU: v.pipe(Int, v.minValue(1)),
  /** The reservation placement counts, in MB. Nomad's minimum is 10. */
  MemoryMB: v.pipe(Int, v.minValue(10)),
  /** The hard limit when oversubscribing (memory_max); 0 means MemoryMB is the limit. */
  MemoryMaxMB: NonNegativeInt,
});
export type Resources = v.InferOutput<typeof ResourcesSchema>;

export const LogConfigSchema = v.strictObject({
  MaxFiles: LogMaxFilesSchema,
  MaxFileSizeMB: LogMaxFileSizeMbSchema,
});
export type LogConfig = v.InferOutput<typeof LogConfigSchema>;

export const TaskLifecycleSchema = v.strictObject({
  Hook: v.picklist(LIFECYCLE_HOOKS),
  Sidecar: v.boolean(),
});
export type TaskLifecycle = v.InferOutput<typeof TaskLifecycleSchema>;

export const PortSchema = v.strictObject({
  Label: v.pipe(v.string(), v.regex(PORT_LABEL, "must be letters, digits and underscores (it names NOMAD_PORT_<label>)")),
  /** The host port: set by the job for a static port, by placement for a dynamic one (0 until then). */
  Value: v.pipe(Int, v.minValue(0), v.maxValue(65535)),
  /** The port the task listens on when it differs from Value (NOMAD_PORT_<label>); 0 when the same. */
  To: v.pipe(Int, v.minValue(-1), v.maxValue(65535)),
  HostNetwork: v.string(),
});
export type Port = v.InferOutput<typeof PortSchema>;

export const NetworkResourceSchema = v.strictObject({
  /** drover has no CNI: tasks share the host's network, or (exec) get none but loopback. */
  Mode: v.picklist(NETWORK_MODES),
  /** Set in an allocation: the address the ports are bound on. Empty in a job. */
  IP: v.string(),
  ReservedPorts: v.array(PortSchema),
  DynamicPorts: v.array(PortSchema),
});
export type NetworkResource = v.InferOutput<typeof NetworkResourceSchema>;

export const EphemeralDiskSchema = v.strictObject({
  Sticky: v.boolean(),
  Migrate: v.boolean(),
  SizeMB: v.pipe(Int, v.minValue(1)),
});
export type EphemeralDisk = v.InferOutput<typeof EphemeralDiskSchema>;

/**
 * The `config` block of raw_exec and exec. `${...}` stays literal: the task
 * runner resolves it. Keys beyond command and args belong to the driver,
 * which checks them when it starts the task (drivers/*.ts); the job file's
 * grammar (jobspec/fields.ts) names which exist.
 */
export const DriverConfigSchema = v.objectWithRest(
  {
    command: v.pipe(v.string(), v.minLength(1, "must not be empty")),
    args: v.array(v.string()),
  },
  v.unknown(),
);
export type DriverConfig = v.InferOutput<typeof DriverConfigSchema>;

export const TaskSchema = v.strictObject({
  Name: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  Driver: v.picklist(DRIVERS),
  /** Run the task as this user; "" runs it as the agent's user. */
  User: v.string(),
  Config: DriverConfigSchema,
  Env: StringMap,
  Meta: StringMap,
  Resources: ResourcesSchema,
  /** The group's policy merged with the task's own. */
  RestartPolicy: RestartPolicySchema,
  LogConfig: LogConfigSchema,
  KillTimeout: Nanoseconds,
  /** "" means SIGINT, Nomad's default kill signal. */
  KillSignal: v.string(),
  Leader: v.boolean(),
  Lifecycle: v.nullable(TaskLifecycleSchema),
});
export type Task = v.InferOutput<typeof TaskSchema>;

export const TaskGroupSchema = v.strictObject({
  Name: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  Count: NonNegativeInt,
  Meta: StringMap,
  RestartPolicy: RestartPolicySchema,
  EphemeralDisk: EphemeralDiskSchema,
  /** At most one (Nomad's limit for a group). */
  Networks: v.array(NetworkResourceSchema),
  Tasks: v.pipe(v.array(TaskSchema), v.minLength(1, "a group needs at least one task")),
});
export type TaskGroup = v.InferOutput<typeof TaskGroupSchema>;

export const JobSchema = v.strictObject({
  ID: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  Name: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  Namespace: v.string(),
  Region: v.string(),
  Type: v.picklist(JOB_TYPES),
  Priority: v.pipe(Int, v.minValue(1), v.maxValue(100)),
  Datacenters: v.pipe(v.array(v.pipe(v.string(), v.minLength(1, "must not be empty"))), v.minLength(1, "name at least one datacenter")),
  Meta: StringMap,
  TaskGroups: v.pipe(v.array(TaskGroupSchema), v.minLength(1, "a job needs at least one group")),
  /** A stopped job keeps its definition; its allocations are told to stop. */
  Stop: v.boolean(),
  // Set by the server; ignored in a submitted job.
  Status: v.picklist(JOB_STATUSES),
  StatusDescription: v.string(),
  Version: NonNegativeInt,
  SubmitTime: UnixNanos,
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
  JobModifyIndex: NonNegativeInt,
});
export type Job = v.InferOutput<typeof JobSchema>;

/** The fields the server sets on register; a submitted job's values for them are ignored. */
export const SERVER_SET_JOB_FIELDS = [
  "Status",
  "StatusDescription",
  "Version",
  "SubmitTime",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
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
