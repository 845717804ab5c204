/**
 * What drover reads from NVML, in plain values (Nomad's nvml client): each
 * GPU's identity and fixed properties for the fingerprint, and its live
 * figures for the statistics. A figure the library cannot give (the function
 * is missing, or the GPU does not support it) is undefined, never an error;
 * only the library itself failing is.
 */
import { openNvml, type NvmlLibrary } from "../../runtime/nvml.ts";
import { BYTES_PER_MIB } from "../../lib/units.ts";

const NVML_SUCCESS = 0;
/** Buffer sizes from nvml.h (NVML_*_BUFFER_SIZE), each with room to spare. */
const DRIVER_VERSION_BYTES = 80;
const DEVICE_NAME_BYTES = 96;
const UUID_BYTES = 96;
const PCI_INFO_BYTES = 128;
/** nvmlPciInfo_t v3: busId follows busIdLegacy[16] and five unsigned ints. */
const PCI_BUS_ID_OFFSET = 36;
const PCI_BUS_ID_BYTES = 32;
/** nvmlClockType_t, nvmlTemperatureSensors_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, nvmlMemoryLocation_t. */
const CLOCK_SM = 1;
const CLOCK_MEM = 2;
const TEMPERATURE_GPU = 0;
const MEMORY_ERROR_UNCORRECTED = 1;
const VOLATILE_ECC = 0;
const LOCATION = { l1: 0, l2: 1, device: 2 } as const;
/** nvmlEnableState_t. */
const FEATURE_ENABLED = 1;
/** MB/s per lane for each PCIe generation (Nomad's table, with 5 and 6 added). */
const PCIE_LANE_MBPS: Readonly<Record<number, number>> = { 1: 250, 2: 500, 3: 985, 4: 1969, 5: 3938, 6: 7877 };
const MW_PER_W = 1000;

/** NVML reported an error for a call drover cannot do without. */
export class NvmlError extends Error {
  override name = "NvmlError";
}

/** What one GPU is: fixed for as long as the driver stays loaded. */
export interface GpuInfo {
  uuid: string;
  name?: string;
  /** /dev/nvidia<minor>. */
  minor?: number;
  memoryMiB?: number;
  powerW?: number;
  bar1MiB?: number;
  pciBandwidthMBps?: number;
  coresClockMHz?: number;
  memoryClockMHz?: number;
  displayState: string;
  persistenceMode: string;
  pciBusId: string;
}

/** One GPU's live figures. */
export interface GpuStatus {
  info: GpuInfo;
  powerUsageW?: number;
  gpuUtilization?: number;
  memoryUtilization?: number;
  encoderUtilization?: number;
  decoderUtilization?: number;
  temperatureC?: number;
  usedMemoryMiB?: number;
  bar1UsedMiB?: number;
  eccErrorsL1Cache?: number;
  eccErrorsL2Cache?: number;
  eccErrorsDevice?: number;
}

const decoder = new TextDecoder();

function text(buffer: Uint8Array, from = 0, length = buffer.length - from): string {
  const slice = buffer.subarray(from, from + length);
  const end = slice.indexOf(0);
  return decoder.decode(end < 0 ? slice : slice.subarray(0, end));
}

function enableState(value: number | undefined): string {
  if (value === undefined) return "N/A";
  return value === FEATURE_ENABLED ? "Enabled" : "Disabled";
}

export class NvmlClient {
  private readonly words = new Uint32Array(2);
  private readonly longs = new BigUint64Array(3);
  private readonly handleOut = new BigUint64Array(1);
  private readonly bytes = new Uint8Array(Math.max(DRIVER_VERSION_BYTES, DEVICE_NAME_BYTES, UUID_BYTES, PCI_INFO_BYTES));
  /** GPU properties by UUID, read once. */
  private readonly infos = new Map<string, GpuInfo>();

  private constructor(private readonly lib: NvmlLibrary) {}

  /** Loads and initializes NVML from `path`; throws when the library is absent, NvmlError when it fails to start. */
  static open(path: string): NvmlClient {
    const lib = openNvml(path);
    const client = new NvmlClient(lib);
    client.check(lib.required.nvmlInit_v2(), "nvmlInit");
    return client;
  }

  /** The optional NVML functions this library lacks. */
  get missing(): readonly string[] {
    return this.lib.missing;
  }

  close(): void {
    this.lib.required.nvmlShutdown();
  }

  driverVersion(): string {
    this.check(this.lib.required.nvmlSystemGetDriverVersion(this.bytes, DRIVER_VERSION_BYTES), "nvmlSystemGetDriverVersion");
    return text(this.bytes);
  }

  /** Every GPU's properties, in NVML's index order. */
  gpus(): GpuInfo[] {
    return this.handles().map((handle) => this.info(handle));
  }

  /** Every GPU's live figures. */
  status(): GpuStatus[] {
    return this.handles().map((handle) => this.statusOf(handle));
  }

  private handles(): bigint[] {
    const { required } = this.lib;
    this.check(required.nvmlDeviceGetCount_v2(this.words), "nvmlDeviceGetCount");
    const count = this.words[0]!;
    const out: bigint[] = [];
    for (let index = 0; index < count; index++) {
      this.check(required.nvmlDeviceGetHandleByIndex_v2(index, this.handleOut), "nvmlDeviceGetHandleByIndex");
      out.push(this.handleOut[0]!);
    }
    return out;
  }

  private uuid(handle: bigint): string {
    this.check(this.lib.required.nvmlDeviceGetUUID(handle, this.bytes, UUID_BYTES), "nvmlDeviceGetUUID");
    return text(this.bytes, 0, UUID_BYTES);
  }

  private info(handle: bigint): GpuInfo {
    const uuid = this.uuid(handle);
    const known = this.infos.get(uuid);
    if (known) return known;
    const fn = this.lib.optional;
    const name = fn.nvmlDeviceGetName && this.ok(fn.nvmlDeviceGetName(handle, this.bytes, DEVICE_NAME_BYTES)) ? text(this.bytes, 0, DEVICE_NAME_BYTES) : undefined;
    const pciBusId = fn.nvmlDeviceGetPciInfo_v3 && this.ok(fn.nvmlDeviceGetPciInfo_v3(handle, this.bytes)) ? text(this.bytes, PCI_BUS_ID_OFFSET, PCI_BUS_ID_BYTES) : "";
    const generation = this.word(fn.nvmlDeviceGetMaxPcieLinkGeneration, handle);
    const width = this.word(fn.nvmlDeviceGetMaxPcieLinkWidth, handle);
    const laneMBps = generation === undefined ? undefined : PCIE_LANE_MBPS[generation];
    const info: GpuInfo = {
      uuid,
      name,
      minor: this.word(fn.nvmlDeviceGetMinorNumber, handle),
      memoryMiB: this.memory(handle)?.total,
      powerW: this.milliwatts(fn.nvmlDeviceGetPowerManagementLimit, handle),
      bar1MiB: this.bar1(handle)?.total,
      pciBandwidthMBps: laneMBps === undefined || width === undefined ? undefined : laneMBps * width,
      coresClockMHz: this.clock(handle, CLOCK_SM),
      memoryClockMHz: this.clock(handle, CLOCK_MEM),
      displayState: enableState(this.word(fn.nvmlDeviceGetDisplayActive, handle)),
      persistenceMode: enableState(this.word(fn.nvmlDeviceGetPersistenceMode, handle)),
      pciBusId,
    };
    this.infos.set(uuid, info);
    return info;
  }

  private statusOf(handle: bigint): GpuStatus {
    const fn = this.lib.optional;
    const info = this.info(handle);
    const utilization = fn.nvmlDeviceGetUtilizationRates && this.ok(fn.nvmlDeviceGetUtilizationRates(handle, this.words)) ? [this.words[0]!, this.words[1]!] : undefined;
    return {
      info,
      powerUsageW: this.milliwatts(fn.nvmlDeviceGetPowerUsage, handle),
      gpuUtilization: utilization?.[0],
      memoryUtilization: utilization?.[1],
      encoderUtilization: this.codec(fn.nvmlDeviceGetEncoderUtilization, handle),
      decoderUtilization: this.codec(fn.nvmlDeviceGetDecoderUtilization, handle),
      temperatureC: fn.nvmlDeviceGetTemperature && this.ok(fn.nvmlDeviceGetTemperature(handle, TEMPERATURE_GPU, this.words)) ? this.words[0] : undefined,
      usedMemoryMiB: this.memory(handle)?.used,
      bar1UsedMiB: this.bar1(handle)?.used,
      eccErrorsL1Cache: this.eccErrors(handle, LOCATION.l1),
      eccErrorsL2Cache: this.eccErrors(handle, LOCATION.l2),
      eccErrorsDevice: this.eccErrors(handle, LOCATION.device),
    };
  }

  private ok(result: number): boolean {
    return result === NVML_SUCCESS;
  }

  private check(result: number, call: string): void {
    if (result !== NVML_SUCCESS) throw new NvmlError(`${call}: ${this.lib.required.nvmlErrorString(result)} (NVML error ${result})`);
  }

  private word(fn: ((handle: bigint, out: Uint32Array) => number) | undefined, handle: bigint): number | undefined {
    return fn && this.ok(fn(handle, this.words)) ? this.words[0] : undefined;
  }

  private milliwatts(fn: ((handle: bigint, out: Uint32Array) => number) | undefined, handle: bigint): number | undefined {
    const value = this.word(fn, handle);
    return value === undefined ? undefined : Math.floor(value / MW_PER_W);
  }

  private clock(handle: bigint, type: number): number | undefined {
    const fn = this.lib.optional.nvmlDeviceGetMaxClockInfo;
    return fn && this.ok(fn(handle, type, this.words)) ? this.words[0] : undefined;
  }

  private codec(fn: ((handle: bigint, percent: Uint32Array, period: Uint32Array) => number) | undefined, handle: bigint): number | undefined {
    return fn && this.ok(fn(handle, this.words, this.words.subarray(1))) ? this.words[0] : undefined;
  }

  /** nvmlMemory_t and nvmlBAR1Memory_t alike: total, free, used, in bytes. */
  private totalAndUsed(fn: ((handle: bigint, out: BigUint64Array) => number) | undefined, handle: bigint): { total: number; used: number } | undefined {
    if (!fn || !this.ok(fn(handle, this.longs))) return undefined;
    const mib = (bytes: bigint) => Number(bytes / BigInt(BYTES_PER_MIB));
    return { total: mib(this.longs[0]!), used: mib(this.longs[2]!) };
  }

  private memory(handle: bigint) {
    return this.totalAndUsed(this.lib.optional.nvmlDeviceGetMemoryInfo, handle);
  }

  private bar1(handle: bigint) {
    return this.totalAndUsed(this.lib.optional.nvmlDeviceGetBAR1MemoryInfo, handle);
  }

  private eccErrors(handle: bigint, location: number): number | undefined {
    const fn = this.lib.optional.nvmlDeviceGetMemoryErrorCounter;
    if (!fn || !this.ok(fn(handle, MEMORY_ERROR_UNCORRECTED, VOLATILE_ECC, location, this.longs))) return undefined;
    return Number(this.longs[0]!);
  }
}
