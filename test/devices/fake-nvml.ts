/**
 * A fake NVML for tests: fixtures/fake-nvml.c compiled into a shared library
 * in the test's temporary directory, loaded the way the real one is (by path,
 * through DROVER_NVML_LIBRARY), with GPUs whose values the test sets. The
 * library reads them from `<library>.state`, written here.
 */
import { spawnSync } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const SOURCE = join(import.meta.dir, "fixtures", "fake-nvml.c");

function hasCompiler(): boolean {
  return spawnSync("gcc", ["--version"]).status === 0;
}

/** Why fake-NVML tests cannot run here, or undefined. */
export const fakeNvmlUnavailable: string | undefined = hasCompiler() ? undefined : "gcc is not installed: the fake NVML library cannot be built";

/** One GPU's figures, in the units the fake reports them (MiB, mW, MHz, %, °C). */
export interface FakeGpu {
  uuid: string;
  name: string;
  minor: number;
  memory_mib: number;
  memory_used_mib: number;
  power_limit_mw: number;
  power_usage_mw: number;
  pci_bus_id: string;
  bar1_mib: number;
  bar1_used_mib: number;
  pcie_generation: number;
  pcie_width: number;
  clock_sm_mhz: number;
  clock_memory_mhz: number;
  display_active: number;
  persistence_mode: number;
  temperature_c: number;
  gpu_utilization: number;
  memory_utilization: number;
  encoder_utilization: number;
  decoder_utilization: number;
  ecc_l1: number;
  ecc_l2: number;
  ecc_device: number;
}

/** "na" makes the fake answer NOT_SUPPORTED for that figure. */
export type FakeGpuValues = { [K in keyof FakeGpu]: FakeGpu[K] | "na" };

export function fakeGpu(index: number, overrides: Partial<FakeGpuValues> = {}): FakeGpuValues {
  return {
    uuid: `GPU-${String(index).padStart(8, "0")}-fake-4000-8000-000000000000`,
    name: "Tesla T4",
    minor: index,
    memory_mib: 15360,
    memory_used_mib: 100 + index,
    power_limit_mw: 70_000,
    power_usage_mw: 20_000 + index * 1000,
    pci_bus_id: `00000000:${(0x10 + index).toString(16).padStart(2, "0")}:00.0`,
    bar1_mib: 256,
    bar1_used_mib: 2,
    pcie_generation: 3,
    pcie_width: 16,
    clock_sm_mhz: 1590,
    clock_memory_mhz: 5001,
    display_active: 0,
    persistence_mode: 1,
    temperature_c: 40 + index,
    gpu_utilization: index * 10,
    memory_utilization: index,
    encoder_utilization: 0,
    decoder_utilization: 0,
    ecc_l1: 0,
    ecc_l2: 0,
    ecc_device: 0,
    ...overrides,
  };
}

export class FakeNvml {
  readonly library: string;
  gpus: FakeGpuValues[];
  driverVersion = "535.104.05";
  /** An nvmlReturn_t nvmlInit answers with, to fake a broken driver. */
  initError: number | undefined;

  /** Compiles the fake into `dir`; `minimal` leaves out every optional NVML function. */
  constructor(dir: string, options: { gpus?: number; minimal?: boolean } = {}) {
    this.library = join(dir, options.minimal ? "libnvidia-ml-minimal.so.1" : "libnvidia-ml.so.1");
    const built = spawnSync("gcc", ["-shared", "-fPIC", "-O2", ...(options.minimal ? ["-DFAKE_NVML_MINIMAL"] : []), "-o", this.library, SOURCE], { encoding: "utf8" });
    if (built.status !== 0) throw new Error(`building the fake NVML failed: ${built.stderr}`);
    this.gpus = Array.from({ length: options.gpus ?? 8 }, (_, i) => fakeGpu(i));
    this.write();
  }

  /** The environment that points drover at this library. */
  get env(): Record<string, string> {
    return { DROVER_NVML_LIBRARY: this.library };
  }

  set(index: number, values: Partial<FakeGpuValues>): void {
    this.gpus[index] = { ...this.gpus[index]!, ...values };
    this.write();
  }

  /** Writes the state the library answers from; it reads it again at its next device count. */
  write(): void {
    const lines = [`driver_version=${this.driverVersion}`, `count=${this.gpus.length}`];
    if (this.initError !== undefined) lines.push(`init_error=${this.initError}`);
    this.gpus.forEach((gpu, i) => {
      for (const [key, value] of Object.entries(gpu)) lines.push(`gpu${i}.${key}=${value}`);
    });
    // Written beside and renamed over, so the library never reads half a file.
    writeFileSync(`${this.library}.state.tmp`, `${lines.join("\n")}\n`);
    renameSync(`${this.library}.state.tmp`, `${this.library}.state`);
  }
}
