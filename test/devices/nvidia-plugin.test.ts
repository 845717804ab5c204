import { describe, expect, test } from "bun:test";
import pino from "pino";
import { NvidiaDevicePlugin, NVML_LIBRARY, type NvidiaConfig } from "../../src/devices/nvidia/plugin.ts";
import type { DeviceGroupStats, NodeDeviceResource } from "../../src/structs/device.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { FakeNvml, fakeGpu, fakeNvmlUnavailable } from "./fake-nvml.ts";

const skip = fakeNvmlUnavailable !== undefined;
if (skip) console.log(`skipping fake-NVML tests: ${fakeNvmlUnavailable}`);

/** A short period, so a test sees a change within milliseconds. */
const FAST_MS = 20;

function logs() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

function plugin(library: string, config: Partial<NvidiaConfig> = {}, exists?: (path: string) => boolean) {
  const { logger, lines } = logs();
  const nvidia = new NvidiaDevicePlugin({ ignoredGpuIds: [], fingerprintPeriodMs: FAST_MS, library, ...config }, logger, exists);
  return { nvidia, lines };
}

/** The first `n` reports of a stream, then the stream is stopped. */
async function take<T>(stream: (signal: AbortSignal) => AsyncIterable<T>, n: number, between?: (seen: T[]) => void): Promise<T[]> {
  const abort = new AbortController();
  const seen: T[] = [];
  for await (const item of stream(abort.signal)) {
    seen.push(item);
    if (seen.length >= n) break;
    between?.(seen);
  }
  abort.abort();
  return seen;
}

const fingerprint = (nvidia: NvidiaDevicePlugin, n = 1, between?: (seen: NodeDeviceResource[][]) => void) =>
  take((signal) => nvidia.fingerprint(signal), n, between);
const stats = (nvidia: NvidiaDevicePlugin) => take((signal) => nvidia.stats(FAST_MS, signal), 1).then((all) => all[0]!);

describe.skipIf(skip)("the NVIDIA plugin over a fake NVML", () => {
  const dir = tempDir("drover-nvml-");
  const fake = skip ? undefined! : new FakeNvml(dir);

  test("fingerprints GPUs of one model as one group, with Nomad's attributes", async () => {
    const { nvidia } = plugin(fake.library);
    const [groups] = await fingerprint(nvidia);
    expect(groups).toHaveLength(1);
    const group = groups![0]!;
    expect(group).toMatchObject({ Vendor: "nvidia", Type: "gpu", Name: "Tesla T4" });
    expect(group.Instances.map((instance) => instance.ID)).toEqual(fake.gpus.map((gpu) => gpu.uuid as string));
    expect(group.Instances[1]).toEqual({ ID: fake.gpus[1]!.uuid as string, Healthy: true, HealthDescription: "", Locality: { PciBusID: "00000000:11:00.0" } });
    expect(group.Attributes).toEqual({
      memory: { Int: 15360, Unit: "MiB" },
      power: { Int: 70, Unit: "W" },
      bar1: { Int: 256, Unit: "MiB" },
      cores_clock: { Int: 1590, Unit: "MHz" },
      memory_clock: { Int: 5001, Unit: "MHz" },
      pci_bandwidth: { Int: 985 * 16, Unit: "MB/s" },
      display_state: { String: "Disabled", Unit: "" },
      persistence_mode: { String: "Enabled", Unit: "" },
      driver_version: { String: "535.104.05", Unit: "" },
    });
  });

  test("reports statistics per GPU in Nomad's names and units, N/A where NVML has none", async () => {
    const own = new FakeNvml(tempDir("drover-nvml-"), { gpus: 2 });
    own.set(1, { temperature_c: "na", power_usage_mw: "na", ecc_l2: 3 });
    const { nvidia } = plugin(own.library);
    await fingerprint(nvidia);
    const [group] = await stats(nvidia);
    const first = group!.InstanceStats[own.gpus[0]!.uuid as string]!;
    expect(first.Summary).toEqual({ IntNumeratorVal: 100, IntDenominatorVal: 15360, Unit: "MiB", Desc: "UsedMemory / TotalMemory" });
    const values = (id: string) =>
      Object.fromEntries(Object.entries(group!.InstanceStats[id]!.Stats!.Attributes).map(([name, value]) => [name, value.StringVal ?? [value.IntNumeratorVal, value.IntDenominatorVal, value.Unit]]));
    expect(values(own.gpus[0]!.uuid as string)).toEqual({
      "Power usage": [20, 70, "W"],
      "GPU utilization": [0, undefined, "%"],
      "Memory utilization": [0, undefined, "%"],
      "Encoder utilization": [0, undefined, "%"],
      "Decoder utilization": [0, undefined, "%"],
      Temperature: [40, undefined, "C"],
      "Memory state": [100, 15360, "MiB"],
      "BAR1 buffer state": [2, 256, "MiB"],
      "ECC L1 errors": [0, undefined, "#"],
      "ECC L2 errors": [0, undefined, "#"],
      "ECC memory errors": [0, undefined, "#"],
    });
    expect(values(own.gpus[1]!.uuid as string)).toMatchObject({ Temperature: "N/A", "Power usage": "N/A", "ECC L2 errors": [3, undefined, "#"] });
    expect(Date.parse(first.Timestamp)).toBeGreaterThan(Date.now() - 60_000);
  });

  test("a GPU that appears or goes is reported again; ignored GPUs never are", async () => {
    const own = new FakeNvml(tempDir("drover-nvml-"), { gpus: 3 });
    own.set(2, { name: "A100-SXM4-80GB", memory_mib: 81920 });
    const ignored = own.gpus[0]!.uuid as string;
    const { nvidia } = plugin(own.library, { ignoredGpuIds: [ignored] });
    const reports = await fingerprint(nvidia, 2, () => {
      own.gpus.push(fakeGpu(3));
      own.write();
    });
    const names = (groups: NodeDeviceResource[]) => Object.fromEntries(groups.map((group) => [group.Name, group.Instances.map((i) => i.ID)]));
    expect(names(reports[0]!)).toEqual({ "Tesla T4": [own.gpus[1]!.uuid as string], "A100-SXM4-80GB": [own.gpus[2]!.uuid as string] });
    expect(names(reports[1]!)["Tesla T4"]).toEqual([own.gpus[1]!.uuid as string, own.gpus[3]!.uuid as string]);
    expect(reports[1]!.find((group) => group.Name === "A100-SXM4-80GB")!.Attributes.memory).toEqual({ Int: 81920, Unit: "MiB" });
    // Statistics cover the fingerprinted GPUs only.
    const all = (await stats(nvidia)).flatMap((group: DeviceGroupStats) => Object.keys(group.InstanceStats));
    expect(all).not.toContain(ignored);
    expect(all).toHaveLength(3);
  });

  test("reserve names the GPUs for the task and gives the device nodes the host has", async () => {
    const present = new Set(["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia3"]);
    const { nvidia } = plugin(fake.library, {}, (path) => present.has(path));
    await fingerprint(nvidia);
    const ids = [fake.gpus[3]!.uuid as string, fake.gpus[5]!.uuid as string];
    expect(nvidia.reserve(ids)).toEqual({
      env: { NVIDIA_VISIBLE_DEVICES: ids.join(",") },
      mounts: [],
      devices: ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia3"].map((path) => ({ taskPath: path, hostPath: path, permissions: "rwm" })),
    });
    expect(() => nvidia.reserve(["GPU-gone"])).toThrow("unknown NVIDIA device IDs: GPU-gone");
    expect(nvidia.reserve([])).toEqual({ env: {}, mounts: [], devices: [] });
  });

  test("an NVML without the optional functions still lists its GPUs, leaving out what it cannot say", async () => {
    const minimal = new FakeNvml(tempDir("drover-nvml-"), { gpus: 2, minimal: true });
    const { nvidia, lines } = plugin(minimal.library);
    const [groups] = await fingerprint(nvidia);
    expect(groups).toEqual([
      {
        Vendor: "nvidia",
        Type: "gpu",
        Name: "N/A",
        Instances: minimal.gpus.map((gpu) => ({ ID: gpu.uuid as string, Healthy: true, HealthDescription: "", Locality: { PciBusID: "" } })),
        Attributes: {
          display_state: { String: "N/A", Unit: "" },
          persistence_mode: { String: "N/A", Unit: "" },
          driver_version: { String: "535.104.05", Unit: "" },
        },
      },
    ]);
    const [group] = await stats(nvidia);
    const attributes = Object.values(group!.InstanceStats)[0]!.Stats!.Attributes;
    expect(Object.values(attributes).every((value) => value.StringVal === "N/A")).toBe(true);
    expect(lines.find((line) => line.msg.includes("lacks some functions"))?.missing).toContain("nvmlDeviceGetMemoryInfo");
  });

  test("an NVML that fails to start is logged as an error, and the node has no NVIDIA devices", async () => {
    const broken = new FakeNvml(tempDir("drover-nvml-"), { gpus: 1 });
    broken.initError = 9;
    broken.write();
    const { nvidia, lines } = plugin(broken.library);
    expect(await fingerprint(nvidia)).toEqual([]);
    expect(lines.filter((line) => line.level === 50).map((line) => [line.msg, line.err])).toEqual([
      ["NVML failed to start; no NVIDIA devices", "nvmlInit: Driver Not Loaded (NVML error 9)"],
    ]);
  });
});

describe("the NVIDIA plugin without NVML", () => {
  test("says once, at INFO, that the host has no NVIDIA devices, and reports none", async () => {
    const { nvidia, lines } = plugin(`/nonexistent/${NVML_LIBRARY}`);
    expect(await fingerprint(nvidia)).toEqual([]);
    expect(await take((signal) => nvidia.stats(FAST_MS, signal), 1)).toEqual([]);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([[30, "NVML not found: this host has no NVIDIA devices"]]);
    expect(() => nvidia.reserve(["GPU-x"])).toThrow("unknown NVIDIA device IDs");
  });
});

/** Where the host has a real NVIDIA GPU: the same plugin over the real library. */
describe.skipIf(!realNvml())("the NVIDIA plugin over this host's NVML", () => {
  test("fingerprints the host's GPUs and reads their statistics", async () => {
    const { nvidia, lines } = plugin(NVML_LIBRARY);
    const [groups] = await fingerprint(nvidia);
    console.log(`real NVML: ${JSON.stringify(groups)}`);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(groups!.length).toBeGreaterThan(0);
    const group = groups![0]!;
    expect(group).toMatchObject({ Vendor: "nvidia", Type: "gpu" });
    expect(group.Instances[0]!.ID).toMatch(/^(GPU|MIG)-/);
    expect(group.Attributes.memory?.Int).toBeGreaterThan(0);
    expect(group.Attributes.driver_version?.String).toMatch(/^\d+\./);
    const reading = await waitFor("statistics", () => stats(nvidia).then((all) => all[0]));
    const instance = reading.InstanceStats[group.Instances[0]!.ID]!;
    console.log(`real NVML statistics: ${JSON.stringify(instance)}`);
    expect(instance.Summary?.IntDenominatorVal).toBe(group.Attributes.memory!.Int!);
    expect(instance.Stats!.Attributes["GPU utilization"]!.Unit).toBe("%");
  });
});

function realNvml(): boolean {
  const { nvidia } = plugin(NVML_LIBRARY);
  const found = (nvidia as unknown as { nvml: unknown }).nvml !== undefined;
  if (!found) console.log("skipping the real-NVML test: this host has no libnvidia-ml.so.1");
  return found;
}
