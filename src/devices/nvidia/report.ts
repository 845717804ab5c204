/**
 * NVML's figures in Nomad's words: the device group attributes the NVIDIA
 * plugin fingerprints (`memory`, `power`, `bar1`, `driver_version`, ...),
 * and the statistics it reports per GPU ("GPU utilization", "Memory state",
 * ...), with Nomad's names, units and descriptions, so `nomad node status`
 * and `nomad alloc status -stats` print what they print for Nomad. A figure
 * NVML did not give is an attribute left out, or a statistic reading "N/A".
 */
import type { Attribute, DeviceGroupStats, DeviceStats, NodeDeviceResource, StatValue } from "../../structs/device.ts";
import type { GpuInfo, GpuStatus } from "./nvml.ts";
import { groupBy } from "../../lib/group-by.ts";

const VENDOR = "nvidia";
const DEVICE_TYPE = "gpu";
/** What Nomad reports for a figure NVML did not give, and the group of GPUs without a name. */
const NOT_AVAILABLE = "N/A";

function intAttribute(value: number | undefined, unit: string): Attribute | undefined {
  return value === undefined ? undefined : { Int: value, Unit: unit };
}

function groupAttributes(gpu: GpuInfo, driverVersion: string): Record<string, Attribute> {
  const numbers: Record<string, Attribute | undefined> = {
    memory: intAttribute(gpu.memoryMiB, "MiB"),
    power: intAttribute(gpu.powerW, "W"),
    bar1: intAttribute(gpu.bar1MiB, "MiB"),
    cores_clock: intAttribute(gpu.coresClockMHz, "MHz"),
    memory_clock: intAttribute(gpu.memoryClockMHz, "MHz"),
    pci_bandwidth: intAttribute(gpu.pciBandwidthMBps, "MB/s"),
  };
  const out: Record<string, Attribute> = {
    display_state: { String: gpu.displayState, Unit: "" },
    persistence_mode: { String: gpu.persistenceMode, Unit: "" },
    driver_version: { String: driverVersion, Unit: "" },
  };
  for (const [name, attribute] of Object.entries(numbers)) if (attribute) out[name] = attribute;
  return out;
}

/**
 * GPUs grouped by model, as Nomad groups them: one device group per name,
 * its attributes taken from its first GPU (GPUs of one model are alike).
 */
export function deviceGroups(gpus: readonly GpuInfo[], driverVersion: string): NodeDeviceResource[] {
  const byName = groupBy(gpus, (gpu) => gpu.name ?? NOT_AVAILABLE);
  return [...byName.entries()].map(([name, members]) => ({
    Vendor: VENDOR,
    Type: DEVICE_TYPE,
    Name: name,
    // Healthy until NVML says otherwise: Nomad reads no health from NVML either (that needs DCGM).
    Instances: members.map((gpu) => ({ ID: gpu.uuid, Healthy: true, HealthDescription: "", Locality: { PciBusID: gpu.pciBusId } })),
    Attributes: groupAttributes(members[0]!, driverVersion),
  }));
}

/** Nomad's statistic names, units and descriptions (devices/gpu/nvidia/stats.go). */
const STAT = {
  power: { name: "Power usage", Unit: "W", Desc: "Power usage for this GPU in watts and its associated circuitry (e.g. memory) / Maximum GPU Power" },
  gpu: { name: "GPU utilization", Unit: "%", Desc: "Percent of time over the past sample period during which one or more kernels were executing on the GPU." },
  memoryUtilization: { name: "Memory utilization", Unit: "%", Desc: "Percentage of bandwidth used during the past sample period" },
  encoder: { name: "Encoder utilization", Unit: "%", Desc: "Percent of time over the past sample period during which GPU Encoder was used" },
  decoder: { name: "Decoder utilization", Unit: "%", Desc: "Percent of time over the past sample period during which GPU Decoder was used" },
  temperature: { name: "Temperature", Unit: "C", Desc: "Temperature of the Unit" },
  memory: { name: "Memory state", Unit: "MiB", Desc: "UsedMemory / TotalMemory" },
  bar1: { name: "BAR1 buffer state", Unit: "MiB", Desc: "UsedBAR1 / TotalBAR1" },
  eccL1: { name: "ECC L1 errors", Unit: "#", Desc: "Requested L1Cache error counter for the device" },
  eccL2: { name: "ECC L2 errors", Unit: "#", Desc: "Requested L2Cache error counter for the device" },
  eccDevice: { name: "ECC memory errors", Unit: "#", Desc: "Requested memory error counter for the device" },
} as const;

type StatKind = (typeof STAT)[keyof typeof STAT];

function stat(kind: StatKind, numerator: number | undefined, denominator?: number | null): StatValue {
  const { Unit, Desc } = kind;
  // A fraction needs both parts; `null` marks a denominator that is required but missing.
  if (numerator === undefined || denominator === null) return { StringVal: NOT_AVAILABLE, Unit, Desc };
  return denominator === undefined ? { IntNumeratorVal: numerator, Unit, Desc } : { IntNumeratorVal: numerator, IntDenominatorVal: denominator, Unit, Desc };
}

const required = (value: number | undefined): number | null => value ?? null;

function instanceStats(status: GpuStatus, timestamp: string): DeviceStats {
  const { info } = status;
  const memory = stat(STAT.memory, status.usedMemoryMiB, required(info.memoryMiB));
  const values: [StatKind, StatValue][] = [
    [STAT.power, stat(STAT.power, status.powerUsageW, required(info.powerW))],
    [STAT.gpu, stat(STAT.gpu, status.gpuUtilization)],
    [STAT.memoryUtilization, stat(STAT.memoryUtilization, status.memoryUtilization)],
    [STAT.encoder, stat(STAT.encoder, status.encoderUtilization)],
    [STAT.decoder, stat(STAT.decoder, status.decoderUtilization)],
    [STAT.temperature, stat(STAT.temperature, status.temperatureC)],
    [STAT.memory, memory],
    [STAT.bar1, stat(STAT.bar1, status.bar1UsedMiB, required(info.bar1MiB))],
    [STAT.eccL1, stat(STAT.eccL1, status.eccErrorsL1Cache)],
    [STAT.eccL2, stat(STAT.eccL2, status.eccErrorsL2Cache)],
    [STAT.eccDevice, stat(STAT.eccDevice, status.eccErrorsDevice)],
  ];
  return {
    Summary: memory,
    Stats: { Nested: null, Attributes: Object.fromEntries(values.map(([kind, value]) => [kind.name, value])) },
    Timestamp: timestamp,
  };
}

/** Statistics of the given GPUs, grouped by model like the fingerprint. */
export function deviceGroupStats(statuses: readonly GpuStatus[], at: Date): DeviceGroupStats[] {
  const timestamp = at.toISOString();
  const groups = new Map<string, DeviceGroupStats>();
  for (const status of statuses) {
    const name = status.info.name ?? NOT_AVAILABLE;
    let group = groups.get(name);
    if (!group) {
      group = { Vendor: VENDOR, Type: DEVICE_TYPE, Name: name, InstanceStats: {} };
      groups.set(name, group);
    }
    group.InstanceStats[status.info.uuid] = instanceStats(status, timestamp);
  }
  return [...groups.values()];
}
