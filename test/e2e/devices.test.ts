/**
 * GPUs through the compiled binary, on a host whose NVML is a fake with 8
 * GPUs: a job asking for one is placed on a specific GPU, its task sees it
 * (NVIDIA_VISIBLE_DEVICES), its statistics are that GPU's, Nomad's own
 * `nomad alloc status -stats` shows them, and a job asking for more GPUs
 * than remain waits with a placement failure naming the device.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AllocResourceUsage } from "../../src/stats/alloc.ts";
import type { DeviceGroupStats, NodeDeviceResource } from "../../src/structs/device.ts";
import { FakeNvml, fakeNvmlUnavailable } from "../devices/fake-nvml.ts";
import { testAgent } from "../helpers/agent.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { nomad, NOMAD_BINARY, nomadMissing } from "../helpers/nomad.ts";

const skip = fakeNvmlUnavailable !== undefined;
if (skip) console.log(`skipping the GPU e2e test: ${fakeNvmlUnavailable}`);

const gpuJob = (id: string, count: number) => `
job "${id}" {
  group "g" {
    task "cuda" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \\"gpus=$NVIDIA_VISIBLE_DEVICES\\"; exec sleep 600"]
      }
      resources {
        cpu    = 50
        memory = 32
        device "nvidia/gpu" {
          count = ${count}
          constraint {
            attribute = "\${device.attr.memory}"
            operator  = ">="
            value     = "8 GiB"
          }
        }
      }
    }
  }
}
`;

interface Alloc {
  ID: string;
  ClientStatus: string;
  AllocatedResources: { Tasks: Record<string, { Devices: { Name: string; DeviceIDs: string[] }[] }> };
}

interface Evaluation {
  Status: string;
  FailedTGAllocs: Record<string, { DimensionExhausted: Record<string, number> | null }> | null;
}

const fake = skip ? undefined : new FakeNvml(tempDir("drover-e2e-nvml-"));
const agent = await testAgent("drover-e2e-gpu-", { telemetry: { collection_interval: "200ms" } }, fake?.env ?? {});

describe.skipIf(skip)("GPUs with the compiled binary and a fake NVML", () => {
  test("a job gets a GPU, sees it, reports its stats; one asking for more than remain waits naming the device", async () => {
    await agent.start();
    const { cli } = agent;

    const node = (await agent.get<{ ID: string }[]>("/v1/nodes"))[0]!;
    const devices = (await agent.get<{ NodeResources: { Devices: NodeDeviceResource[] } }>(`/v1/node/${node.ID}`)).NodeResources.Devices;
    expect(devices.map((group) => [group.Name, group.Instances.length])).toEqual([["Tesla T4", 8]]);

    writeFileSync(join(agent.dir, "one.hcl"), gpuJob("one", 1));
    expect((await cli("job", "run", "-detach", join(agent.dir, "one.hcl"))).code).toBe(0);
    const alloc = await waitFor("the GPU job running", async () => (await agent.get<Alloc[]>("/v1/job/one/allocations")).find((a) => a.ClientStatus === "running"));
    const [gpu] = alloc.AllocatedResources.Tasks.cuda!.Devices[0]!.DeviceIDs;
    expect(fake!.gpus.map((g) => g.uuid)).toContain(gpu!);

    const logs = await waitFor("the task's output", async () => (await cli("alloc", "logs", alloc.ID, "cuda")).stdout || null);
    expect(logs).toBe(`gpus=${gpu}\n`);

    // The task's statistics are its own GPU's, and they follow what NVML says.
    const index = fake!.gpus.findIndex((g) => g.uuid === gpu);
    fake!.set(index, { gpu_utilization: 87, memory_used_mib: 4321 });
    const usage = await waitFor("the GPU's new figures in the alloc's stats", async () => {
      const stats = await agent.get<AllocResourceUsage>(`/v1/client/allocation/${alloc.ID}/stats`);
      const groups = (stats.Tasks.cuda?.ResourceUsage.DeviceStats ?? []) as DeviceGroupStats[];
      return groups[0]?.InstanceStats[gpu!]?.Stats?.Attributes["GPU utilization"]?.IntNumeratorVal === 87 ? stats : null;
    });
    const taskGroups = usage.Tasks.cuda!.ResourceUsage.DeviceStats as DeviceGroupStats[];
    expect(taskGroups.map((group) => Object.keys(group.InstanceStats))).toEqual([[gpu!]]);
    expect(taskGroups[0]!.InstanceStats[gpu!]!.Summary).toMatchObject({ IntNumeratorVal: 4321, IntDenominatorVal: 15360, Unit: "MiB" });
    expect(usage.ResourceUsage.DeviceStats).toEqual(taskGroups);

    const host = await agent.get<{ DeviceStats: DeviceGroupStats[] }>("/v1/client/stats");
    expect(Object.keys(host.DeviceStats[0]!.InstanceStats)).toHaveLength(8);
    const metrics = await (await fetch(`${agent.address}/v1/metrics?format=prometheus`)).text();
    expect(metrics).toContain(`nomad_client_host_device_gpu_utilization{device_vendor="nvidia",device_type="gpu",device_name="Tesla T4",device_id="${gpu}"`);

    // Seven remain: a job asking for eight waits, and says which device.
    writeFileSync(join(agent.dir, "eight.hcl"), gpuJob("eight", 8));
    expect((await cli("job", "run", "-detach", join(agent.dir, "eight.hcl"))).code).toBe(0);
    const blocked = await waitFor("the blocked evaluation", async () => (await agent.get<Evaluation[]>("/v1/job/eight/evaluations")).find((e) => e.Status === "blocked"));
    expect(blocked.FailedTGAllocs?.g?.DimensionExhausted).toEqual({ "devices: no devices match request 8 x nvidia/gpu (7 free)": 1 });
    expect(await agent.get<Alloc[]>("/v1/job/eight/allocations")).toEqual([]);
    const status = await cli("job", "status", "eight");
    expect(status.stdout).toContain("devices: no devices match request 8 x nvidia/gpu (7 free)");

    if (!NOMAD_BINARY) {
      console.log(`skipping nomad alloc status -stats: ${nomadMissing}`);
    } else {
      const shown = await nomad(agent.address, "alloc", "status", "-stats", alloc.ID);
      expect(shown.stderr).toBe("");
      expect(shown.stdout).toContain("Device Stats");
      expect(shown.stdout).toContain(`nvidia/gpu/Tesla T4[${gpu}]`);
      expect(shown.stdout).toMatch(/GPU utilization\s+= 87 %/);
      expect(shown.stdout).toMatch(/Memory state\s+= 4321 \/ 15360 MiB/);
      const nodeStatus = await nomad(agent.address, "node", "status", "-verbose", node.ID);
      expect(nodeStatus.stdout.match(/^nvidia\/gpu\/Tesla T4\[GPU-\S+\]\s+\d+ \/ 15360 MiB$/gm)).toHaveLength(8);
    }

    for (const id of ["one", "eight"]) await cli("job", "stop", "-purge", id);
    await agent.executorsGone();
  });
});
