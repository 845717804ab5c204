/**
 * The parts of Nomad's API answers the UI reads, as valibot schemas. Loose
 * objects: the agent may send more (it does), and a field the UI does not
 * read never breaks a page. Go writes empty slices and maps as null, so
 * lists and maps read null as empty.
 */
import * as v from "valibot";

const list = <T extends v.GenericSchema>(item: T) => v.nullish(v.array(item), () => []);
const record = <T extends v.GenericSchema>(item: T) => v.nullish(v.record(v.string(), item), () => ({}));
const text = v.nullish(v.string(), "");
const num = v.nullish(v.number(), 0);

const GroupSummarySchema = v.looseObject({
  Queued: num,
  Complete: num,
  Failed: num,
  Running: num,
  Starting: num,
  Lost: num,
});
export type GroupSummary = v.InferOutput<typeof GroupSummarySchema>;

/** What a job and its list entry both carry. */
const jobFields = {
  ID: v.string(),
  Namespace: text,
  Name: text,
  Type: text,
  Priority: num,
  Status: text,
  StatusDescription: text,
  Stop: v.optional(v.boolean(), false),
  Version: num,
  SubmitTime: num,
};

export const JobListStubSchema = v.looseObject({
  ...jobFields,
  JobSummary: v.nullish(v.looseObject({ Summary: record(GroupSummarySchema) })),
});
export type JobListStub = v.InferOutput<typeof JobListStubSchema>;
export const JobListSchema = list(JobListStubSchema);

const TaskSchema = v.looseObject({
  Name: v.string(),
  Driver: text,
  Lifecycle: v.nullish(v.looseObject({ Hook: text, Sidecar: v.optional(v.boolean(), false) })),
  Resources: v.nullish(v.looseObject({ CPU: num, MemoryMB: num, MemoryMaxMB: num })),
});

export const JobSchema = v.looseObject({
  ...jobFields,
  Datacenters: list(v.string()),
  TaskGroups: list(v.looseObject({ Name: v.string(), Count: num, Tasks: list(TaskSchema) })),
});
export type Job = v.InferOutput<typeof JobSchema>;

export const JobSummarySchema = v.looseObject({ Summary: record(GroupSummarySchema) });

export const JobVersionsSchema = v.looseObject({
  Versions: list(v.looseObject({ Version: num, Stable: v.optional(v.boolean(), false), SubmitTime: num, Stop: v.optional(v.boolean(), false) })),
  Diffs: list(v.nullish(v.looseObject({ Type: text, TaskGroups: list(v.looseObject({ Name: text, Type: text })), Fields: list(v.looseObject({ Name: text, Type: text, Old: text, New: text })) }))),
});

export const DeploymentSchema = v.looseObject({
  ID: v.string(),
  JobVersion: num,
  Status: text,
  StatusDescription: text,
  TaskGroups: record(
    v.looseObject({
      Promoted: v.nullish(v.boolean(), false),
      AutoPromote: v.nullish(v.boolean(), false),
      DesiredCanaries: num,
      DesiredTotal: num,
      PlacedAllocs: num,
      HealthyAllocs: num,
      UnhealthyAllocs: num,
    }),
  ),
});
export type Deployment = v.InferOutput<typeof DeploymentSchema>;
/** GET /v1/namespaces: those the token may see. */
export const NamespaceListSchema = list(v.looseObject({ Name: v.string(), Description: text }));

/** GET /v1/job/:id/deployment: the latest, or null for a job without one. */
export const LatestDeploymentSchema = v.nullable(DeploymentSchema);

export const TaskEventSchema = v.looseObject({
  Type: text,
  Time: num,
  Message: text,
  DisplayMessage: text,
});
export type TaskEvent = v.InferOutput<typeof TaskEventSchema>;

export const TaskStateSchema = v.looseObject({
  State: text,
  Failed: v.optional(v.boolean(), false),
  Restarts: num,
  StartedAt: v.nullish(v.string()),
  FinishedAt: v.nullish(v.string()),
  Events: list(TaskEventSchema),
});
export type TaskState = v.InferOutput<typeof TaskStateSchema>;

const AllocStubSchema = v.looseObject({
  ID: v.string(),
  Namespace: text,
  Name: text,
  JobID: text,
  JobVersion: num,
  TaskGroup: text,
  NodeID: text,
  NodeName: text,
  DesiredStatus: text,
  ClientStatus: text,
  ClientDescription: text,
  CreateTime: num,
  ModifyTime: num,
  ModifyIndex: num,
  TaskStates: record(TaskStateSchema),
});
export type AllocStub = v.InferOutput<typeof AllocStubSchema>;
export const AllocListSchema = list(AllocStubSchema);

const TaskAllocatedSchema = v.looseObject({
  Cpu: v.nullish(v.looseObject({ CpuShares: num })),
  Memory: v.nullish(v.looseObject({ MemoryMB: num, MemoryMaxMB: num })),
});

export const AllocationSchema = v.looseObject({
  ...AllocStubSchema.entries,
  AllocatedResources: v.nullish(v.looseObject({ Tasks: record(TaskAllocatedSchema), TaskLifecycles: v.nullish(v.record(v.string(), v.unknown())) })),
  Job: v.nullish(v.looseObject({ TaskGroups: list(v.looseObject({ Name: v.string(), Tasks: list(TaskSchema) })) })),
  PreviousAllocation: text,
  NextAllocation: text,
});
export type Allocation = v.InferOutput<typeof AllocationSchema>;

export const EvaluationSchema = v.looseObject({
  ID: v.string(),
  Status: text,
  TriggeredBy: text,
  StatusDescription: text,
  CreateTime: num,
  FailedTGAllocs: v.nullish(
    v.record(
      v.string(),
      v.looseObject({
        NodesEvaluated: num,
        NodesExhausted: num,
        CoalescedFailures: num,
        ClassFiltered: v.nullish(v.record(v.string(), v.number())),
        ConstraintFiltered: v.nullish(v.record(v.string(), v.number())),
        DimensionExhausted: v.nullish(v.record(v.string(), v.number())),
      }),
    ),
  ),
  QueuedAllocations: v.nullish(v.record(v.string(), v.number())),
});
export type Evaluation = v.InferOutput<typeof EvaluationSchema>;
export const EvaluationListSchema = list(EvaluationSchema);

const MemoryStatsSchema = v.looseObject({ RSS: num, Usage: num, MaxUsage: num, Measured: list(v.string()) });
const CpuStatsSchema = v.looseObject({ TotalTicks: num, Percent: num, ThrottledTime: num });
const ResourceUsageSchema = v.looseObject({ MemoryStats: v.nullish(MemoryStatsSchema), CpuStats: v.nullish(CpuStatsSchema) });

export const AllocStatsSchema = v.looseObject({
  ResourceUsage: v.nullish(ResourceUsageSchema),
  Tasks: record(v.looseObject({ ResourceUsage: v.nullish(ResourceUsageSchema), Timestamp: num })),
  Timestamp: num,
});
export type AllocStats = v.InferOutput<typeof AllocStatsSchema>;

export const HostStatsSchema = v.looseObject({
  Memory: v.nullish(v.looseObject({ Total: num, Available: num, Used: num, Free: num })),
  CPU: list(v.looseObject({ CPU: text, Total: num })),
  CPUTicksConsumed: num,
  Uptime: num,
  Timestamp: num,
});
export type HostStats = v.InferOutput<typeof HostStatsSchema>;

const DriverInfoSchema = v.looseObject({ Detected: v.optional(v.boolean(), false), Healthy: v.optional(v.boolean(), false), HealthDescription: text, UpdateTime: text });

const DeviceGroupSchema = v.looseObject({
  Vendor: text,
  Type: text,
  Name: text,
  Instances: list(v.looseObject({ ID: text, Healthy: v.optional(v.boolean(), false), HealthDescription: text })),
  Attributes: v.nullish(v.record(v.string(), v.unknown())),
});

export const NodeListSchema = list(v.looseObject({ ID: v.string(), Name: text, Datacenter: text, Status: text, SchedulingEligibility: text, Drain: v.optional(v.boolean(), false), Version: text }));

export const NodeSchema = v.looseObject({
  ID: v.string(),
  Name: text,
  Datacenter: text,
  NodeClass: text,
  HTTPAddr: text,
  Status: text,
  SchedulingEligibility: text,
  Drain: v.optional(v.boolean(), false),
  Attributes: record(v.string()),
  Drivers: record(DriverInfoSchema),
  NodeResources: v.nullish(
    v.looseObject({
      Cpu: v.nullish(v.looseObject({ CpuShares: num, TotalCpuCores: num })),
      Memory: v.nullish(v.looseObject({ MemoryMB: num })),
      Disk: v.nullish(v.looseObject({ DiskMB: num })),
      Devices: list(DeviceGroupSchema),
    }),
  ),
  ReservedResources: v.nullish(
    v.looseObject({
      Cpu: v.nullish(v.looseObject({ CpuShares: num })),
      Memory: v.nullish(v.looseObject({ MemoryMB: num })),
      Disk: v.nullish(v.looseObject({ DiskMB: num })),
    }),
  ),
  Events: list(v.looseObject({ Message: text, Subsystem: text, Timestamp: text })),
});
export type Node = v.InferOutput<typeof NodeSchema>;

export const AgentSelfSchema = v.looseObject({
  config: v.looseObject({ Region: text, Datacenter: text, NodeName: text, DataDir: text, ACL: v.nullish(v.looseObject({ Enabled: v.optional(v.boolean(), false) })) }),
  member: v.looseObject({ Name: text, Addr: text, Port: num, Status: text }),
  stats: v.record(v.string(), v.record(v.string(), v.string())),
});
export type AgentSelf = v.InferOutput<typeof AgentSelfSchema>;

export const AgentHealthSchema = v.record(v.string(), v.looseObject({ ok: v.boolean(), message: text }));

export const AclTokenSchema = v.looseObject({
  AccessorID: text,
  Name: text,
  Type: text,
  Policies: list(v.string()),
  Global: v.optional(v.boolean(), false),
  ExpirationTime: v.nullish(v.string()),
});
export type AclToken = v.InferOutput<typeof AclTokenSchema>;

/** Nomad 1.x answers a policy with its rules parsed (RulesJSON); capabilities come expanded from `policy`. */
export const AclPolicySchema = v.looseObject({
  Name: text,
  Rules: text,
  RulesJSON: v.nullish(
    v.looseObject({
      Namespaces: list(v.looseObject({ Name: text, Policy: text, Capabilities: list(v.string()) })),
      Node: v.nullish(v.looseObject({ Policy: text })),
      Agent: v.nullish(v.looseObject({ Policy: text })),
      Operator: v.nullish(v.looseObject({ Policy: text })),
    }),
  ),
});
export type AclPolicy = v.InferOutput<typeof AclPolicySchema>;

export const RegisterResponseSchema = v.looseObject({ EvalID: text, Warnings: text });
export const ValidateResponseSchema = v.looseObject({ ValidationErrors: list(v.string()), Error: text, Warnings: text });
