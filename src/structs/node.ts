/**
 * A client node as the server knows it (Nomad's Node): identity, attributes,
 * drivers, capacity and reservations. The client registers it; placement
 * reads it.
 */
import * as v from "valibot";
import { NonNegativeInt, StringMap } from "./common.ts";
import { NodeDeviceResourceSchema } from "./device.ts";

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
  Mode: v.literal("host"),
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

/** What the client sends to register or update its node. */
export const NodeRegistrationSchema = v.strictObject({
  ID: v.pipe(v.string(), v.minLength(1)),
  Name: v.string(),
  Datacenter: v.string(),
  NodeClass: v.string(),
  /** host:port of the agent's HTTP API. */
  HTTPAddr: v.string(),
  Attributes: StringMap,
  Meta: StringMap,
  Drivers: v.record(v.string(), DriverInfoSchema),
  NodeResources: NodeResourcesSchema,
  ReservedResources: NodeReservedResourcesSchema,
  Status: v.picklist(NODE_STATUSES),
  StatusDescription: v.string(),
  SchedulingEligibility: v.picklist(["eligible", "ineligible"]),
});
export type NodeRegistration = v.InferOutput<typeof NodeRegistrationSchema>;

export const NodeSchema = v.strictObject({
  ...NodeRegistrationSchema.entries,
  Drain: v.boolean(),
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
  | "Drain"
  | "SchedulingEligibility"
  | "Status"
  | "StatusDescription"
  | "Drivers"
  | "CreateIndex"
  | "ModifyIndex"
> & { Address: string; Version: string };
