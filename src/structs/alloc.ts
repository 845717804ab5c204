/**
 * Allocations: one placement of a task group on a node, in Nomad's API
 * shape. The server owns the desired side (DesiredStatus, resources, ports,
 * the job version); the client owns ClientStatus, ClientDescription and
 * TaskStates and reports them back.
 *
 *   ClientStatus:  pending ──> running ──> complete | failed
 *                     └───────────────────> complete | failed | lost
 *   DesiredStatus: run ──> stop (job stopped or updated, alloc stopped)
 */
import * as v from "valibot";
import { Int, NonNegativeInt, UnixNanos } from "./common.ts";
import { AllocatedDeviceResourceSchema } from "./device.ts";
import { JobSchema, NetworkResourceSchema, TaskLifecycleSchema, type Task, type TaskGroup } from "./job.ts";
import { TaskStateSchema } from "./task-state.ts";

export const CLIENT_STATUSES = ["pending", "running", "complete", "failed", "lost"] as const;
export type ClientStatus = (typeof CLIENT_STATUSES)[number];

export const DESIRED_STATUSES = ["run", "stop", "evict"] as const;
export type DesiredStatus = (typeof DESIRED_STATUSES)[number];

/** Client statuses after which the alloc runs nothing and holds no resources. */
export const TERMINAL_CLIENT_STATUSES: ReadonlySet<ClientStatus> = new Set(["complete", "failed", "lost"]);

export function isClientTerminal(status: ClientStatus): boolean {
  return TERMINAL_CLIENT_STATUSES.has(status);
}

/** Nomad's Allocation.TerminalStatus: told to stop, or finished on the client. */
export function isAllocTerminal(alloc: { DesiredStatus: DesiredStatus; ClientStatus: ClientStatus }): boolean {
  return alloc.DesiredStatus !== "run" || isClientTerminal(alloc.ClientStatus);
}

export const AllocatedPortSchema = v.strictObject({
  Label: v.string(),
  Value: v.pipe(Int, v.minValue(0), v.maxValue(65535)),
  To: Int,
  HostIP: v.string(),
});
export type AllocatedPort = v.InferOutput<typeof AllocatedPortSchema>;

export const AllocatedTaskResourcesSchema = v.strictObject({
  Cpu: v.strictObject({ CpuShares: NonNegativeInt }),
  Memory: v.strictObject({ MemoryMB: NonNegativeInt, MemoryMaxMB: NonNegativeInt }),
  Networks: v.null(),
  /** The device instances placement reserved for the task; absent in allocs stored before drover had devices. */
  Devices: v.optional(v.array(AllocatedDeviceResourceSchema), () => []),
});
export type AllocatedTaskResources = v.InferOutput<typeof AllocatedTaskResourcesSchema>;

export const AllocatedResourcesSchema = v.strictObject({
  Tasks: v.record(v.string(), AllocatedTaskResourcesSchema),
  TaskLifecycles: v.record(v.string(), v.nullable(TaskLifecycleSchema)),
  Shared: v.strictObject({
    DiskMB: NonNegativeInt,
    Networks: v.array(NetworkResourceSchema),
    Ports: v.array(AllocatedPortSchema),
  }),
});
export type AllocatedResources = v.InferOutput<typeof AllocatedResourcesSchema>;

const Counts = v.nullable(v.record(v.string(), NonNegativeInt));

/** Why placement did or did not find room (Nomad's AllocMetric). */
export const AllocMetricSchema = v.strictObject({
  NodesEvaluated: NonNegativeInt,
  NodesFiltered: NonNegativeInt,
  NodesAvailable: v.record(v.string(), NonNegativeInt),
  ClassFiltered: Counts,
  ConstraintFiltered: Counts,
  NodesExhausted: NonNegativeInt,
  ClassExhausted: Counts,
  DimensionExhausted: Counts,
  QuotaExhausted: v.nullable(v.array(v.string())),
  Scores: v.null(),
  /** Per node considered, its scores by name ("node-affinity", ...) and the normalized total. */
  ScoreMetaData: v.optional(
    v.nullable(v.array(v.strictObject({ NodeID: v.string(), Scores: v.record(v.string(), v.number()), NormScore: v.number() }))),
    null,
  ),
  /** Nanoseconds placement took. */
  AllocationTime: NonNegativeInt,
  /** Further allocations of the same group that failed the same way. */
  CoalescedFailures: NonNegativeInt,
});
export type AllocMetric = v.InferOutput<typeof AllocMetricSchema>;

export const AllocDeploymentStatusSchema = v.object({
  Healthy: v.nullable(v.boolean()),
  Timestamp: v.optional(v.nullable(v.string()), null),
  Canary: v.optional(v.boolean(), false),
  ModifyIndex: v.optional(NonNegativeInt, 0),
});
export type AllocDeploymentStatus = v.InferOutput<typeof AllocDeploymentStatusSchema>;

/** One earlier placement this alloc replaces after a failure (Nomad's RescheduleEvent). */
export const RescheduleEventSchema = v.strictObject({
  /** When it was rescheduled, nanoseconds since the epoch. */
  RescheduleTime: UnixNanos,
  PrevAllocID: v.string(),
  PrevNodeID: v.string(),
  /** The delay that was waited, nanoseconds. */
  Delay: NonNegativeInt,
});
export type RescheduleEvent = v.InferOutput<typeof RescheduleEventSchema>;

/**
 * What the server wants to happen to an alloc beyond its DesiredStatus
 * (Nomad's DesiredTransition): Migrate is set when a node drain moves it.
 */
export const DesiredTransitionSchema = v.strictObject({
  Migrate: v.nullable(v.boolean()),
  Reschedule: v.nullable(v.boolean()),
  ForceReschedule: v.nullable(v.boolean()),
});
export type DesiredTransition = v.InferOutput<typeof DesiredTransitionSchema>;

export const NO_TRANSITION: DesiredTransition = Object.freeze({ Migrate: null, Reschedule: null, ForceReschedule: null });

/** An allocation as stored: everything but the job, which is kept once per version. */
export const StoredAllocationSchema = v.strictObject({
  ID: v.string(),
  Namespace: v.string(),
  EvalID: v.string(),
  /** "<job>.<group>[<index>]". */
  Name: v.string(),
  NodeID: v.string(),
  NodeName: v.string(),
  JobID: v.string(),
  TaskGroup: v.string(),
  AllocatedResources: AllocatedResourcesSchema,
  DesiredStatus: v.picklist(DESIRED_STATUSES),
  DesiredDescription: v.string(),
  DesiredTransition: v.optional(DesiredTransitionSchema, () => ({ ...NO_TRANSITION })),
  ClientStatus: v.picklist(CLIENT_STATUSES),
  ClientDescription: v.string(),
  TaskStates: v.nullable(v.record(v.string(), TaskStateSchema)),
  DeploymentStatus: v.nullable(AllocDeploymentStatusSchema),
  /** The deployment that placed or last updated it ("" when none). */
  DeploymentID: v.optional(v.string(), ""),
  /** The reschedules that led to this alloc, oldest first. */
  RescheduleTracker: v.optional(v.nullable(v.strictObject({ Events: v.array(RescheduleEventSchema) })), null),
  /** The evaluation that will reschedule this failed alloc once its delay is over. */
  FollowupEvalID: v.optional(v.string(), ""),
  /** The alloc this one replaces; the client waits for it and moves its data (ephemeral_disk sticky/migrate). */
  PreviousAllocation: v.string(),
  NextAllocation: v.string(),
  Metrics: AllocMetricSchema,
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
  /** Bumped only when the server changes the alloc (not by client status updates). */
  AllocModifyIndex: NonNegativeInt,
  CreateTime: UnixNanos,
  ModifyTime: UnixNanos,
});
export type StoredAllocation = v.InferOutput<typeof StoredAllocationSchema>;

/** GET /v1/allocation/:id and what the client receives: the alloc with its job version. */
export const AllocationSchema = v.strictObject({ ...StoredAllocationSchema.entries, Job: JobSchema });
export type Allocation = v.InferOutput<typeof AllocationSchema>;

/** One row of GET /v1/allocations and /v1/job/:id/allocations. */
export type AllocListStub = Pick<
  Allocation,
  | "ID"
  | "EvalID"
  | "Name"
  | "Namespace"
  | "NodeID"
  | "NodeName"
  | "JobID"
  | "TaskGroup"
  | "AllocatedResources"
  | "DesiredStatus"
  | "DesiredDescription"
  | "ClientStatus"
  | "ClientDescription"
  | "TaskStates"
  | "DeploymentStatus"
  | "PreviousAllocation"
  | "NextAllocation"
  | "CreateIndex"
  | "ModifyIndex"
  | "AllocModifyIndex"
  | "CreateTime"
  | "ModifyTime"
  | "DesiredTransition"
  | "DeploymentID"
  | "RescheduleTracker"
  | "FollowupEvalID"
> & {
  JobType: string;
  JobVersion: number;
  PreemptedAllocations: null;
  PreemptedByAllocation: string;
};

/** An alloc as the list endpoints show it. */
export function allocListStub(alloc: Allocation): AllocListStub {
  return {
    ID: alloc.ID,
    EvalID: alloc.EvalID,
    Name: alloc.Name,
    Namespace: alloc.Namespace,
    NodeID: alloc.NodeID,
    NodeName: alloc.NodeName,
    JobID: alloc.JobID,
    JobType: alloc.Job.Type,
    JobVersion: alloc.Job.Version,
    TaskGroup: alloc.TaskGroup,
    AllocatedResources: alloc.AllocatedResources,
    DesiredStatus: alloc.DesiredStatus,
    DesiredDescription: alloc.DesiredDescription,
    DesiredTransition: alloc.DesiredTransition,
    ClientStatus: alloc.ClientStatus,
    ClientDescription: alloc.ClientDescription,
    TaskStates: alloc.TaskStates,
    DeploymentStatus: alloc.DeploymentStatus,
    DeploymentID: alloc.DeploymentID,
    RescheduleTracker: alloc.RescheduleTracker,
    FollowupEvalID: alloc.FollowupEvalID,
    ...UNUSED_ALLOC_FIELDS,
    PreviousAllocation: alloc.PreviousAllocation,
    NextAllocation: alloc.NextAllocation,
    CreateIndex: alloc.CreateIndex,
    ModifyIndex: alloc.ModifyIndex,
    AllocModifyIndex: alloc.AllocModifyIndex,
    CreateTime: alloc.CreateTime,
    ModifyTime: alloc.ModifyTime,
  };
}

/** The task group an alloc runs, from the job version it carries. */
export function allocTaskGroup(alloc: Pick<Allocation, "Job" | "TaskGroup">): TaskGroup | undefined {
  return alloc.Job.TaskGroups.find((group) => group.Name === alloc.TaskGroup);
}

/** One task of the group an alloc runs. */
export function allocTask(alloc: Pick<Allocation, "Job" | "TaskGroup">, name: string): Task | undefined {
  return allocTaskGroup(alloc)?.Tasks.find((task) => task.Name === name);
}

/** The index in "<job>.<group>[<index>]". */
export function allocIndex(name: string): number {
  const match = /\[(\d+)\]$/.exec(name);
  return match ? Number(match[1]) : 0;
}

export function allocName(jobId: string, group: string, index: number): string {
  return `${jobId}.${group}[${index}]`;
}

/**
 * An allocation as Nomad's API serves it (GET /v1/allocation/:id, the
 * node's allocs): drover's alloc plus the legacy `Resources` (the sum of
 * its tasks and the shared disk and networks), `TaskResources` and
 * `SharedResources` that Nomad 0.12's CLI reads, and the preemption fields
 * as an alloc without them has them.
 */
export function apiAllocation(alloc: Allocation) {
  const { Tasks, Shared } = alloc.AllocatedResources;
  const taskResources = Object.fromEntries(
    Object.entries(Tasks).map(([name, task]) => [
      name,
      { CPU: task.Cpu.CpuShares, MemoryMB: task.Memory.MemoryMB, MemoryMaxMB: task.Memory.MemoryMaxMB, DiskMB: 0, IOPS: 0, Networks: null, Devices: null },
    ]),
  );
  const sum = (pick: (task: AllocatedTaskResources) => number) => Object.values(Tasks).reduce((total, task) => total + pick(task), 0);
  return {
    ...alloc,
    Resources: {
      CPU: sum((task) => task.Cpu.CpuShares),
      MemoryMB: sum((task) => task.Memory.MemoryMB),
      DiskMB: Shared.DiskMB,
      IOPS: 0,
      Networks: Shared.Networks,
      Devices: null,
    },
    TaskResources: taskResources,
    SharedResources: { CPU: 0, MemoryMB: 0, DiskMB: Shared.DiskMB, IOPS: 0, Networks: Shared.Networks, Devices: null },
    ...UNUSED_ALLOC_FIELDS,
  };
}
export type ApiAllocation = ReturnType<typeof apiAllocation>;

/** What drover has no use for (preemption: one node has no lower-priority job to evict for another), as Nomad serves an alloc without it. */
const UNUSED_ALLOC_FIELDS = {
  PreemptedAllocations: null,
  PreemptedByAllocation: "",
} as const;
