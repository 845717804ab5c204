/**
 * NVIDIA's management library (NVML, libnvidia-ml.so.1) through ffi.ts: the
 * declarations only, as C has them; src/devices/nvidia/ gives them meaning.
 *
 * Every call returns an nvmlReturn_t (0 = success) and writes its results
 * through pointer arguments: pass a typed array of the right size. A device
 * handle (nvmlDevice_t) is a pointer, carried as a 64-bit integer.
 *
 * The required table is what any NVML has had for a decade; each optional
 * function may be missing from an older or trimmed library, and is then
 * simply absent from `optional`.
 */
import { dlopen, FFIType, type Library } from "./ffi.ts";

const { i32, u32, u64, ptr, cstring } = FFIType;

/** nvmlDevice_t, passed by value. */
const handle = u64;

export const NVML_REQUIRED_SYMBOLS = {
  nvmlInit_v2: { args: [], returns: i32 },
  nvmlShutdown: { args: [], returns: i32 },
  nvmlErrorString: { args: [i32], returns: cstring },
  nvmlSystemGetDriverVersion: { args: [ptr, u32], returns: i32 },
  nvmlDeviceGetCount_v2: { args: [ptr], returns: i32 },
  nvmlDeviceGetHandleByIndex_v2: { args: [u32, ptr], returns: i32 },
  nvmlDeviceGetUUID: { args: [handle, ptr, u32], returns: i32 },
} as const;

export const NVML_OPTIONAL_SYMBOLS = {
  nvmlDeviceGetName: { args: [handle, ptr, u32], returns: i32 },
  nvmlDeviceGetMinorNumber: { args: [handle, ptr], returns: i32 },
  /** nvmlMemory_t: u64 total, free, used (bytes). */
  nvmlDeviceGetMemoryInfo: { args: [handle, ptr], returns: i32 },
  /** milliwatts */
  nvmlDeviceGetPowerManagementLimit: { args: [handle, ptr], returns: i32 },
  /** nvmlPciInfo_t (v3): char busIdLegacy[16], u32 domain, bus, device, pciDeviceId, pciSubSystemId, char busId[32]. */
  nvmlDeviceGetPciInfo_v3: { args: [handle, ptr], returns: i32 },
  /** nvmlBAR1Memory_t: u64 total, free, used (bytes). */
  nvmlDeviceGetBAR1MemoryInfo: { args: [handle, ptr], returns: i32 },
  nvmlDeviceGetMaxPcieLinkGeneration: { args: [handle, ptr], returns: i32 },
  nvmlDeviceGetMaxPcieLinkWidth: { args: [handle, ptr], returns: i32 },
  /** (device, nvmlClockType_t, *MHz) */
  nvmlDeviceGetMaxClockInfo: { args: [handle, i32, ptr], returns: i32 },
  /** nvmlEnableState_t */
  nvmlDeviceGetDisplayActive: { args: [handle, ptr], returns: i32 },
  nvmlDeviceGetPersistenceMode: { args: [handle, ptr], returns: i32 },
  /** milliwatts */
  nvmlDeviceGetPowerUsage: { args: [handle, ptr], returns: i32 },
  /** (device, nvmlTemperatureSensors_t, *°C) */
  nvmlDeviceGetTemperature: { args: [handle, i32, ptr], returns: i32 },
  /** nvmlUtilization_t: u32 gpu, memory (%). */
  nvmlDeviceGetUtilizationRates: { args: [handle, ptr], returns: i32 },
  /** (device, *percent, *samplingPeriodUs) */
  nvmlDeviceGetEncoderUtilization: { args: [handle, ptr, ptr], returns: i32 },
  nvmlDeviceGetDecoderUtilization: { args: [handle, ptr, ptr], returns: i32 },
  /** (device, nvmlMemoryErrorType_t, nvmlEccCounterType_t, nvmlMemoryLocation_t, *u64 count) */
  nvmlDeviceGetMemoryErrorCounter: { args: [handle, i32, i32, i32, ptr], returns: i32 },
} as const;

export type NvmlRequired = Library<typeof NVML_REQUIRED_SYMBOLS>;
export type NvmlOptional = Partial<Library<typeof NVML_OPTIONAL_SYMBOLS>>;

export interface NvmlLibrary {
  required: NvmlRequired;
  optional: NvmlOptional;
  /** The optional functions this library lacks. */
  missing: string[];
}

/**
 * Opens the library at `path` (a name like "libnvidia-ml.so.1" is looked up
 * the way the dynamic linker does); throws when it cannot be loaded or
 * lacks a required function.
 */
export function openNvml(path: string): NvmlLibrary {
  const required = dlopen(path, NVML_REQUIRED_SYMBOLS).symbols;
  try {
    return { required, optional: dlopen(path, NVML_OPTIONAL_SYMBOLS).symbols, missing: [] };
  } catch {
    // Some function is missing: bind the others one by one.
    const optional: Record<string, unknown> = {};
    const missing: string[] = [];
    for (const [name, declaration] of Object.entries(NVML_OPTIONAL_SYMBOLS)) {
      try {
        optional[name] = dlopen(path, { [name]: declaration }).symbols[name];
      } catch {
        missing.push(name);
      }
    }
    return { required, optional: optional as NvmlOptional, missing };
  }
}
