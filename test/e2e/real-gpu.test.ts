/**
 * On a host with a real NVIDIA GPU (skipped elsewhere, saying why): the
 * compiled agent finds the GPUs through the host's own NVML, and an isolated
 * (exec) task asking for one sees exactly its GPU: NVIDIA_VISIBLE_DEVICES,
 * the control nodes and its own /dev/nvidia<N> in its /dev, and, where the
 * host has nvidia-smi, NVML inside the task lists that GPU.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { NvidiaDevicePlugin, NVML_LIBRARY } from "../../src/devices/nvidia/plugin.ts";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import type { NodeDeviceResource } from "../../src/structs/device.ts";
import { testAgent } from "../helpers/agent.ts";
import { capabilities, waitFor } from "../helpers/index.ts";

async function whyNot(): Promise<string | undefined> {
  const probe = new NvidiaDevicePlugin({ ignoredGpuIds: [], fingerprintPeriodMs: 60_000, library: NVML_LIBRARY }, pino({ level: "silent" }));
  const abort = new AbortController();
  let found = 0;
  for await (const groups of probe.fingerprint(abort.signal)) {
    found = groups.reduce((sum, group) => sum + group.Instances.length, 0);
    break;
  }
  abort.abort();
  if (found === 0) return "this host has no NVIDIA GPU that NVML reports";
  const isolation = await detectIsolation();
  if (!isolation.available) return `the exec driver cannot isolate here: ${isolation.reason}`;
  if (capabilities.cgroups.mode === "none") return "no cgroups";
  return undefined;
}

const reason = await whyNot();
if (reason) console.log(`skipping the real-GPU e2e test: ${reason}`);

const JOB = `
job "gpu" {
  group "g" {
    task "cuda" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \\"visible=$NVIDIA_VISIBLE_DEVICES\\"; ls /dev; command -v nvidia-smi >/dev/null && nvidia-smi -L; exec sleep 600"]
      }
      resources {
        memory = 128
        device "nvidia/gpu" {
          count = 1
        }
      }
    }
  }
}
`;

interface Alloc {
  ID: string;
  ClientStatus: string;
  AllocatedResources: { Tasks: Record<string, { Devices: { DeviceIDs: string[] }[] }> };
}

const agent = await testAgent("drover-e2e-real-gpu-");

describe.skipIf(reason !== undefined)("a real GPU with the compiled binary", () => {
  test("an exec task gets its GPU: the variable, the device nodes, and NVML inside", async () => {
    await agent.start();
    const node = (await agent.get<{ ID: string }[]>("/v1/nodes"))[0]!;
    const groups = (await agent.get<{ NodeResources: { Devices: NodeDeviceResource[] } }>(`/v1/node/${node.ID}`)).NodeResources.Devices;
    console.log(`the node's GPUs: ${JSON.stringify(groups)}`);
    expect(groups.length).toBeGreaterThan(0);

    writeFileSync(join(agent.dir, "gpu.hcl"), JOB);
    expect((await agent.cli("job", "run", "-detach", join(agent.dir, "gpu.hcl"))).code).toBe(0);
    const alloc = await waitFor("the GPU task running", async () => (await agent.get<Alloc[]>("/v1/job/gpu/allocations")).find((a) => a.ClientStatus === "running"));
    const gpu = alloc.AllocatedResources.Tasks.cuda!.Devices[0]!.DeviceIDs[0]!;
    const output = await waitFor("the task's output", async () => {
      const logs = (await agent.cli("alloc", "logs", alloc.ID, "cuda")).stdout;
      return logs.includes("nvidia") ? logs : null;
    });
    console.log(`inside the task:\n${output}`);
    const lines = output.split("\n");
    expect(lines[0]).toBe(`visible=${gpu}`);
    expect(lines).toContain("nvidiactl");
    expect(lines.filter((line) => /^nvidia\d+$/.test(line))).toHaveLength(1);
    const smi = lines.filter((line) => line.startsWith("GPU "));
    if (smi.length > 0) expect(smi.join("\n")).toContain(gpu);

    const stats = await waitFor("the GPU's statistics", async () => {
      const usage = await agent.get<{ Tasks: Record<string, { ResourceUsage: { DeviceStats: { InstanceStats: Record<string, unknown> }[] | null } }> }>(
        `/v1/client/allocation/${alloc.ID}/stats`,
      );
      return usage.Tasks.cuda?.ResourceUsage.DeviceStats?.[0]?.InstanceStats[gpu];
    });
    console.log(`its statistics: ${JSON.stringify(stats)}`);
    await agent.cli("job", "stop", "-purge", "gpu");
    await agent.executorsGone();
  });
});
