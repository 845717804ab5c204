/**
 * Devices in Nomad's shapes: what a node has (NodeDeviceResource: a group of
 * instances sharing vendor/type/name and attributes), what a task asks for
 * (RequestedDevice, the job's `device` block, whose schema is the job's), what placement gave it
 * (AllocatedDeviceResource: the instance IDs), and the statistics a device
 * plugin reports (DeviceGroupStats, StatObject, StatValue).
 */
import * as v from "valibot";
import { Int } from "./common.ts";
import type { ResourcesDeviceSchema } from "./job.ts";

/**
 * A typed attribute (Nomad's psstructs.Attribute): exactly one of the values,
 * and for numbers an optional unit ("MiB", "MHz", "W", ...). As Nomad's API
 * writes it: only the value that is set, and Unit.
 */
export const AttributeSchema = v.pipe(
  v.strictObject({
    Float: v.optional(v.number()),
    Int: v.optional(Int),
    String: v.optional(v.string()),
    Bool: v.optional(v.boolean()),
    Unit: v.optional(v.string(), ""),
  }),
  v.check(
    (attribute) => [attribute.Float, attribute.Int, attribute.String, attribute.Bool].filter((value) => value !== undefined).length === 1,
    "an attribute holds exactly one of Float, Int, String, Bool",
  ),
);
export type Attribute = v.InferOutput<typeof AttributeSchema>;

export const NodeDeviceSchema = v.strictObject({
  /** The instance's ID as its plugin names it (NVIDIA: the GPU's UUID). */
  ID: v.pipe(v.string(), v.minLength(1)),
  Healthy: v.boolean(),
  HealthDescription: v.string(),
  Locality: v.nullable(v.strictObject({ PciBusID: v.string() })),
});
export type NodeDevice = v.InferOutput<typeof NodeDeviceSchema>;

export const NodeDeviceResourceSchema = v.strictObject({
  Vendor: v.pipe(v.string(), v.minLength(1)),
  Type: v.pipe(v.string(), v.minLength(1)),
  Name: v.pipe(v.string(), v.minLength(1)),
  Instances: v.array(NodeDeviceSchema),
  Attributes: v.record(v.string(), AttributeSchema),
});
export type NodeDeviceResource = v.InferOutput<typeof NodeDeviceResourceSchema>;

export const AllocatedDeviceResourceSchema = v.strictObject({
  Vendor: v.string(),
  Type: v.string(),
  Name: v.string(),
  DeviceIDs: v.array(v.string()),
});
export type AllocatedDeviceResource = v.InferOutput<typeof AllocatedDeviceResourceSchema>;

/** Operators a device constraint or affinity may use (Nomad's, less the node-level and version ones). */
export const DEVICE_OPERATORS = [
  "=",
  "==",
  "is",
  "!=",
  "not",
  "<",
  "<=",
  ">",
  ">=",
  "regexp",
  "set_contains",
  "set_contains_all",
  "set_contains_any",
  "is_set",
  "is_not_set",
] as const;

/** Operators that compare with nothing on the right. */
export const UNARY_OPERATORS: ReadonlySet<string> = new Set(["is_set", "is_not_set"]);

/** The `device "<vendor>/<type>/<name>"` block of a task's resources (Nomad's RequestedDevice). */
export type RequestedDevice = v.InferOutput<typeof ResourcesDeviceSchema>;

/** Nomad's DeviceIdTuple; an empty part of a request matches anything. */
export interface DeviceId {
  Vendor: string;
  Type: string;
  Name: string;
}

/** Nomad's RequestedDevice.ID: "gpu", "nvidia/gpu" or "nvidia/gpu/Tesla T4". */
export function requestedDeviceId(name: string): DeviceId {
  const [first = "", second, ...rest] = name.split("/");
  if (second === undefined) return { Vendor: "", Type: first, Name: "" };
  return { Vendor: first, Type: second, Name: rest.join("/") };
}

/** True when the device group `id` is one the request `wanted` names (Nomad's DeviceIdTuple.Matches). */
export function deviceIdMatches(id: DeviceId, wanted: DeviceId): boolean {
  return (wanted.Vendor === "" || wanted.Vendor === id.Vendor) && (wanted.Type === "" || wanted.Type === id.Type) && (wanted.Name === "" || wanted.Name === id.Name);
}

/** "nvidia/gpu/Tesla T4", as Nomad prints a group's ID. */
export function deviceGroupName(id: DeviceId): string {
  return `${id.Vendor}/${id.Type}/${id.Name}`;
}

/**
 * One statistic (Nomad's StatValue): a number, or a fraction of two
 * (used / total), or a string or a boolean, with its unit and what it means.
 * Only the fields that are set are written, as Nomad's API does.
 */
export const StatValueSchema = v.strictObject({
  FloatNumeratorVal: v.optional(v.number()),
  FloatDenominatorVal: v.optional(v.number()),
  IntNumeratorVal: v.optional(Int),
  IntDenominatorVal: v.optional(Int),
  StringVal: v.optional(v.string()),
  BoolVal: v.optional(v.boolean()),
  Unit: v.optional(v.string()),
  Desc: v.optional(v.string()),
});
export type StatValue = v.InferOutput<typeof StatValueSchema>;

export interface StatObject {
  Nested: Record<string, StatObject> | null;
  Attributes: Record<string, StatValue>;
}

export const StatObjectSchema: v.GenericSchema<StatObject> = v.strictObject({
  Nested: v.nullable(v.record(v.string(), v.lazy(() => StatObjectSchema))),
  Attributes: v.record(v.string(), StatValueSchema),
});

export const DeviceStatsSchema = v.strictObject({
  /** The one figure a listing shows (NVIDIA: memory used / total). */
  Summary: v.nullable(StatValueSchema),
  Stats: v.nullable(StatObjectSchema),
  /** RFC 3339 (Go's time.Time). */
  Timestamp: v.string(),
});
export type DeviceStats = v.InferOutput<typeof DeviceStatsSchema>;

export const DeviceGroupStatsSchema = v.strictObject({
  Vendor: v.string(),
  Type: v.string(),
  Name: v.string(),
  /** Instance ID -> its statistics. */
  InstanceStats: v.record(v.string(), DeviceStatsSchema),
});
export type DeviceGroupStats = v.InferOutput<typeof DeviceGroupStatsSchema>;
