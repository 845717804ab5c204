/**
 * A client node as the server knows it (Nomad's Node): identity, attributes,
 * drivers, capacity and reservations. The client registers it; placement
 * reads it.
 */
import * as v from "valibot";
import { Int, NonNegativeInt, StringMap, Timestamp } from "./common.ts";
import { NodeDeviceResourceSchema } from "./device.ts";
import { ALL_NODE_POOL, DEFAULT_NODE_POOL, NodePoolNameSchema } from "./node-pool.ts";

export const NODE_STATUSES = ["initializing", "ready", "down"] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export const DriverInfoSchema = v.strictObject({
  Detected: v.boolean(),
  Healthy: v.boolean(),
  HealthDescription: v.string(),
  Attributes: StringMap,
});
export type DriverInfo = v.InferOutput<typeof DriverInfoSchema>;

export const NodeNetworkSchema = v.strictObject({
  /** "bridge": the node can build group bridge networks (Nomad's bridge fingerprint); its Device is the bridge. */
  Mode: v.picklist(["host", "bridge"]),
  Device: v.string(),
  CIDR: v.string(),
  /** The address allocations' ports are bound on. */
  IP: v.string(),
});

const PortNumber = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));

export const NodeResourcesSchema = v.strictObject({
  Cpu: v.strictObject({ CpuShares: NonNegativeInt, TotalCpuCores: NonNegativeInt }),
  Memory: v.strictObject({ MemoryMB: NonNegativeInt }),
  Disk: v.strictObject({ DiskMB: NonNegativeInt }),
  Networks: v.array(NodeNetworkSchema),
  MinDynamicPort: PortNumber,
  MaxDynamicPort: PortNumber,
  /** Device groups the node's device plugins found; absent in nodes stored before drover had devices. */
  Devices: v.optional(v.array(NodeDeviceResourceSchema), () => []),
});
export type NodeResources = v.InferOutput<typeof NodeResourcesSchema>;

export const NodeReservedResourcesSchema = v.strictObject({
  Cpu: v.strictObject({ CpuShares: NonNegativeInt }),
  Memory: v.strictObject({ MemoryMB: NonNegativeInt }),
  Disk: v.strictObject({ DiskMB: NonNegativeInt }),
  /** Nomad's port list syntax: "22,80,8000-8080". */
  Networks: v.strictObject({ ReservedHostPorts: v.string() }),
});
export type NodeReservedResources = v.InferOutput<typeof NodeReservedResourcesSchema>;

/** A host volume the operator offers jobs (Nomad's ClientHostVolumeConfig, from client { host_volume "name" { ... } }). */
export const ClientHostVolumeSchema = v.strictObject({
  Name: v.string(),
  /** The host directory. */
  Path: v.string(),
  /** Every mount of it is read-only, and placement refuses a group that asks to write. */
  ReadOnly: v.boolean(),
});
export type ClientHostVolume = v.InferOutput<typeof ClientHostVolumeSchema>;

/** What the client sends to register or update its node. */
export const NodeRegistrationSchema = v.strictObject({
  ID: v.pipe(v.string(), v.minLength(1)),
  Name: v.string(),
  Datacenter: v.string(),
  NodeClass: v.string(),
  /** Nomad 1.6's node pool (client.node_pool); absent in nodes stored before drover had pools. */
  NodePool: v.optional(
    v.pipe(
      NodePoolNameSchema,
      v.check((name) => name !== ALL_NODE_POOL, `no node may join the built-in node pool "${ALL_NODE_POOL}"`),
    ),
    DEFAULT_NODE_POOL,
  ),
  /** host:port of the agent's HTTP API. */
  HTTPAddr: v.string(),
  /** The HTTP API serves TLS: Nomad's clients then reach it over https, naming it client.<region>.nomad. */
  TLSEnabled: v.optional(v.boolean(), false),
  Attributes: StringMap,
  Meta: StringMap,
  Drivers: v.record(v.string(), DriverInfoSchema),
  /** By name; absent in nodes stored before drover had host volumes. */
  HostVolumes: v.optional(v.record(v.string(), ClientHostVolumeSchema), () => ({})),
  NodeResources: NodeResourcesSchema,
  ReservedResources: NodeReservedResourcesSchema,
  Status: v.picklist(NODE_STATUSES),
  StatusDescription: v.string(),
  SchedulingEligibility: v.picklist(["eligible", "ineligible"]),
});
export type NodeRegistration = v.InferOutput<typeof NodeRegistrationSchema>;

/** Nomad's NodeEvent subsystems. */
export const NODE_EVENT_SUBSYSTEM = { Cluster: "Cluster", Drain: "Drain", Driver: "Driver", Heartbeat: "Heartbeat" } as const;

/** Nomad's MaxRetainedNodeEvents: a node keeps its last 10 events. */
export const MAX_NODE_EVENTS = 10;

/** One entry of a node's history (Nomad's NodeEvent): registration, drain, eligibility. */
export const NodeEventSchema = v.strictObject({
  Message: v.string(),
  Subsystem: v.string(),
  Details: v.nullable(StringMap),
  /** RFC 3339. */
  Timestamp: v.string(),
  CreateIndex: NonNegativeInt,
});
export type NodeEvent = v.InferOutput<typeof NodeEventSchema>;

/**
 * How a drain proceeds (Nomad's DrainStrategy). Deadline in nanoseconds:
 * negative forces every alloc off at once, 0 waits as long as it takes,
 * positive stops what is left at ForceDeadline.
 */
export const DrainStrategySchema = v.strictObject({
  Deadline: Int,
  IgnoreSystemJobs: v.boolean(),
  /** RFC 3339; null when the drain has no deadline (Go's zero time on the wire). */
  ForceDeadline: Timestamp,
  StartedAt: v.string(),
});
export type DrainStrategy = v.InferOutput<typeof DrainStrategySchema>;

export const NodeSchema = v.strictObject({
  ...NodeRegistrationSchema.entries,
  Drain: v.boolean(),
  /** Set while the node drains; the server keeps it (and SchedulingEligibility) across re-registrations. */
  DrainStrategy: v.optional(v.nullable(DrainStrategySchema), null),
  /** Newest last, at most MAX_NODE_EVENTS. */
  Events: v.optional(v.array(NodeEventSchema), []),
  /** Unix seconds of the last status change. */
  StatusUpdatedAt: NonNegativeInt,
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
});
export type Node = v.InferOutput<typeof NodeSchema>;

/** One row of GET /v1/nodes. */
export type NodeListStub = Pick<
  Node,
  | "ID"
  | "Datacenter"
  | "Name"
  | "NodeClass"
  | "NodePool"
  | "Drain"
  | "SchedulingEligibility"
  | "Status"
  | "StatusDescription"
  | "Drivers"
  | "CreateIndex"
  | "ModifyIndex"
> & {
  Address: string;
  Version: string;
  /** With ?os=true: the node's os.name (Nomad 1.x's NodeStubFields). */
  Attributes?: Record<string, string>;
  /** With ?resources=true: what the node has and keeps back, as GET /v1/node/:id shows them. */
  NodeResources?: ApiNode["NodeResources"];
  ReservedResources?: ApiNode["ReservedResources"];
};

/** The optional parts of a node list row (GET /v1/nodes?os=true&resources=true). */
export interface NodeStubFields {
  os: boolean;
  resources: boolean;
}

/** Go's zero time, which Nomad writes for a time that is not set. */
export const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/** Nomad's default link speed for an interface whose speed is unknown (Mbit/s). */
const DEFAULT_MBITS = 1000;

/**
 * A node as Nomad's API serves it (GET /v1/node/:id): drover's node plus the
 * legacy `Resources`/`Reserved` that Nomad 0.12's CLI still reads, Nomad's
 * `NodeResources` members, each driver's UpdateTime, and the fields drover
 * has no use for (CSI, links) set as a node without them has them.
 */
export function apiNode(node: Node) {
  const { MinDynamicPort, MaxDynamicPort, ...resources } = node.NodeResources;
  const networks = resources.Networks.map((network) => ({ ...network, MBits: DEFAULT_MBITS, DNS: null, ReservedPorts: null, DynamicPorts: null }));
  const reserved = node.ReservedResources;
  const updated = new Date(node.StatusUpdatedAt * 1000).toISOString();
  return {
    ...node,
    Resources: {
      CPU: resources.Cpu.CpuShares,
      MemoryMB: resources.Memory.MemoryMB,
      DiskMB: resources.Disk.DiskMB,
      IOPS: 0,
      Networks: networks,
      Devices: null,
    },
    Reserved: {
      CPU: reserved.Cpu.CpuShares,
      MemoryMB: reserved.Memory.MemoryMB,
      DiskMB: reserved.Disk.DiskMB,
      IOPS: 0,
      Networks: null,
      Devices: null,
    },
    // Nomad writes a node without devices with null Devices.
    NodeResources: { ...resources, Networks: networks, Devices: resources.Devices.length > 0 ? resources.Devices : null, NodeNetworks: null, MinDynamicPort, MaxDynamicPort },
    Drivers: Object.fromEntries(Object.entries(node.Drivers).map(([name, driver]) => [name, { ...driver, UpdateTime: updated }])),
    DrainStrategy: node.DrainStrategy && { ...node.DrainStrategy, ForceDeadline: node.DrainStrategy.ForceDeadline ?? GO_ZERO_TIME },
    LastDrain: null,
    Links: {},
    // Nomad writes a node without host volumes with null HostVolumes.
    HostVolumes: Object.keys(node.HostVolumes).length > 0 ? node.HostVolumes : null,
    HostNetworks: null,
    CSIControllerPlugins: null,
    CSINodePlugins: null,
    ComputedClass: "",
  };
}
export type ApiNode = ReturnType<typeof apiNode>;
