/** CPU model, core count and speed; total compute is cores × MHz, as Nomad counts it. */
import { readFileSync } from "node:fs";
import { arch, cpus } from "node:os";

export interface CpuFacts {
  modelName: string;
  cores: number;
  mhz: number;
  totalCompute: number;
}

export function parseCpuinfo(text: string): { modelName: string; mhz: number; processors: number } {
  let modelName = "unknown";
  let processors = 0;
  const speeds: number[] = [];
  for (const line of text.split("\n")) {
    const [key, value] = line.split(/\s*:\s*/, 2);
    if (key === "processor") processors++;
    else if (key === "model name" && value && modelName === "unknown") modelName = value.trim();
    else if (key === "cpu MHz" && value) speeds.push(Number(value));
  }
  const mhz = speeds.length ? Math.max(...speeds) : 0;
  return { modelName, mhz: Math.round(mhz), processors };
}

export function cpuFacts(cpuinfo = "/proc/cpuinfo"): CpuFacts {
  let parsed = { modelName: "unknown", mhz: 0, processors: 0 };
  try {
    parsed = parseCpuinfo(readFileSync(cpuinfo, "utf8"));
  } catch {
    // Fall back to what the runtime reports below.
  }
  const cores = parsed.processors || cpus().length || 1;
  const mhz = parsed.mhz || Math.round(cpus()[0]?.speed ?? 0) || 1000;
  return { modelName: parsed.modelName, cores, mhz, totalCompute: cores * mhz };
}

export function cpuAttributes(facts: CpuFacts): Record<string, string> {
  return {
    "cpu.arch": arch() === "x64" ? "amd64" : arch(),
    "cpu.modelname": facts.modelName,
    "cpu.numcores": String(facts.cores),
    "cpu.frequency": String(facts.mhz),
    "cpu.totalcompute": String(facts.totalCompute),
  };
}
