/**
 * The NVIDIA device plugin, built in (Nomad's nvidia-gpu plugin): GPUs found
 * through NVML, grouped by model; a task's GPUs named in
 * NVIDIA_VISIBLE_DEVICES, and their device nodes for an isolated task.
 *
 *   created (unless the config turns the plugin off): NVML loads ──> fingerprint every fingerprint_period; a change in the
 *          │               set of GPUs (less ignored_gpu_ids) reports the groups again
 *          │             stats every collection interval, for the GPUs last fingerprinted
 *          └ no library: no NVIDIA devices (said once, at INFO); both streams end at once
 *            NVML fails to start: said at ERROR; both streams end at once
 *
 * The library is libnvidia-ml.so.1 as the dynamic linker finds it;
 * DROVER_NVML_LIBRARY names another file (tests use a fake one).
 */
import { existsSync } from "node:fs";
import type { Logger } from "../../lib/logger.ts";
import { sleepUnlessAborted } from "../../lib/timeout.ts";
import type { DeviceGroupStats, NodeDeviceResource } from "../../structs/device.ts";
import type { DevicePlugin, DeviceNode, DeviceReservation } from "../plugin.ts";
import { NvmlClient, NvmlError, type GpuInfo } from "./nvml.ts";
import { deviceGroupStats, deviceGroups } from "./report.ts";

export const NVML_LIBRARY = "libnvidia-ml.so.1";
/** The variable that names another NVML library file. */
export const NVML_LIBRARY_VARIABLE = "DROVER_NVML_LIBRARY";
/** The variable NVIDIA's container runtime and CUDA read for the GPUs a process may use. */
export const VISIBLE_DEVICES_VARIABLE = "NVIDIA_VISIBLE_DEVICES";
/** Device nodes every GPU user needs besides its GPUs' own /dev/nvidia<minor>. */
const CONTROL_NODES = ["/dev/nvidiactl", "/dev/nvidia-uvm"];
/** What the devices cgroup lets a task do with its device nodes: read, write, mknod. */
const DEVICE_PERMISSIONS = "rwm";

export interface NvidiaConfig {
  ignoredGpuIds: readonly string[];
  fingerprintPeriodMs: number;
  /** The NVML library file or name. */
  library: string;
}

export class UnknownDeviceError extends Error {
  override name = "UnknownDeviceError";
}

export class NvidiaDevicePlugin implements DevicePlugin {
  readonly name = "nvidia";
  private readonly nvml: NvmlClient | undefined;
  /** The GPUs of the last fingerprint, by UUID. */
  private devices = new Map<string, GpuInfo>();

  constructor(
    private readonly config: NvidiaConfig,
    private readonly logger: Logger,
    /** Whether a device node exists on the host; tests stand in for /dev. */
    private readonly exists: (path: string) => boolean = existsSync,
  ) {
    this.nvml = this.load();
  }

  private load(): NvmlClient | undefined {
    let nvml: NvmlClient;
    try {
      nvml = NvmlClient.open(this.config.library);
    } catch (err) {
      if (err instanceof NvmlError) this.logger.error({ library: this.config.library, err: err.message }, "NVML failed to start; no NVIDIA devices");
      else this.logger.info({ library: this.config.library }, "NVML not found: this host has no NVIDIA devices");
      return undefined;
    }
    if (nvml.missing.length > 0) this.logger.info({ missing: nvml.missing }, "this NVML lacks some functions; their figures are left out");
    return nvml;
  }

  async *fingerprint(signal: AbortSignal): AsyncIterable<NodeDeviceResource[]> {
    const nvml = this.nvml;
    if (!nvml) return;
    let first = true;
    while (!signal.aborted) {
      try {
        const driverVersion = nvml.driverVersion();
        const gpus = nvml.gpus().filter((gpu) => !this.config.ignoredGpuIds.includes(gpu.uuid));
        if (first || this.changed(gpus)) {
          first = false;
          this.devices = new Map(gpus.map((gpu) => [gpu.uuid, gpu]));
          yield deviceGroups(gpus, driverVersion);
        }
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, "fingerprinting NVIDIA devices failed");
      }
      await sleepUnlessAborted(this.config.fingerprintPeriodMs, signal);
    }
  }

  /** True when a GPU appeared or went since the last fingerprint (Nomad's fingerprintChanged). */
  private changed(gpus: readonly GpuInfo[]): boolean {
    return gpus.length !== this.devices.size || gpus.some((gpu) => !this.devices.has(gpu.uuid));
  }

  reserve(ids: readonly string[]): DeviceReservation {
    if (ids.length === 0) return { env: {}, mounts: [], devices: [] };
    const unknown = ids.filter((id) => !this.devices.has(id));
    if (unknown.length > 0) throw new UnknownDeviceError(`unknown NVIDIA device IDs: ${unknown.join(",")}`);
    const gpuNodes = ids.flatMap((id) => {
      const minor = this.devices.get(id)?.minor;
      return minor === undefined ? [] : [`/dev/nvidia${minor}`];
    });
    const devices: DeviceNode[] = [...CONTROL_NODES, ...gpuNodes]
      .filter((path) => this.exists(path))
      .map((path) => ({ taskPath: path, hostPath: path, permissions: DEVICE_PERMISSIONS }));
    return { env: { [VISIBLE_DEVICES_VARIABLE]: ids.join(",") }, mounts: [], devices };
  }

  async *stats(intervalMs: number, signal: AbortSignal): AsyncIterable<DeviceGroupStats[]> {
    const nvml = this.nvml;
    if (!nvml) return;
    while (!signal.aborted) {
      try {
        const statuses = nvml.status().filter((status) => this.devices.has(status.info.uuid));
        yield deviceGroupStats(statuses, new Date());
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, "reading NVIDIA device statistics failed");
      }
      await sleepUnlessAborted(intervalMs, signal);
    }
  }
}
