import { describe, expect, test } from "bun:test";
import type { Allocation } from "../../src/structs/alloc.ts";
import type { NodeDeviceResource } from "../../src/structs/device.ts";
import { openTestServer, testJob, testNode } from "./fixtures.ts";

function gpus(name: string, count: number, memoryMiB: number, prefix = name): NodeDeviceResource {
  return {
    Vendor: "nvidia",
    Type: "gpu",
    Name: name,
    Instances: Array.from({ length: count }, (_, i) => ({ ID: `GPU-${prefix}-${i}`, Healthy: true, HealthDescription: "", Locality: null })),
    Attributes: { memory: { Int: memoryMiB, Unit: "MiB" }, driver_version: { String: "535.104.05", Unit: "" } },
  };
}

/** A node with the given device groups, and helpers to read what was placed. */
function setup(devices: NodeDeviceResource[]) {
  const { server, dataDir } = openTestServer();
  const node = testNode({ NodeResources: { ...testNode().NodeResources, Devices: devices } });
  server.nodes.upsert(node);
  const live = (jobId: string) => server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === jobId && alloc.DesiredStatus === "run");
  return { server, node, live, dataDir };
}

/** testJob with a device request on its task. */
function gpuJob(id: string, device: Record<string, unknown>, count = 1): Record<string, unknown> {
  const job = testJob(id, { count });
  const group = (job.TaskGroups as Record<string, unknown>[])[0]!;
  const task = (group.Tasks as Record<string, unknown>[])[0]!;
  task.Resources = { ...(task.Resources as object), Devices: [device] };
  return job;
}

const idsOf = (alloc: Allocation) => alloc.AllocatedResources.Tasks.srv!.Devices.flatMap((device) => device.DeviceIDs);

describe("device placement", () => {
  test("a task gets specific instances, and no instance is ever given twice", () => {
    const { server, live } = setup([gpus("Tesla T4", 8, 16384)]);
    server.jobs.register(gpuJob("a", { Name: "nvidia/gpu", Count: 3 }, 2));
    server.jobs.register(gpuJob("b", { Name: "gpu", Count: 2 }));
    const allocs = [...live("a"), ...live("b")];
    expect(allocs).toHaveLength(3);
    expect(allocs[0]!.AllocatedResources.Tasks.srv!.Devices).toEqual([
      { Vendor: "nvidia", Type: "gpu", Name: "Tesla T4", DeviceIDs: expect.any(Array) },
    ]);
    const taken = allocs.flatMap(idsOf);
    expect(taken).toHaveLength(8);
    expect(new Set(taken).size).toBe(8);
  });

  test("a request for more than remain waits, naming the device; it is placed when instances free up", () => {
    const { server, live } = setup([gpus("Tesla T4", 8, 16384)]);
    server.jobs.register(gpuJob("first", { Name: "nvidia/gpu", Count: 6 }));
    const response = server.jobs.register(gpuJob("second", { Name: "nvidia/gpu", Count: 4 }));
    expect(live("second")).toHaveLength(0);
    const evaluation = server.evals.get(response.EvalID);
    expect(evaluation.FailedTGAllocs?.web).toMatchObject({
      NodesExhausted: 1,
      DimensionExhausted: { 'devices: no devices match request 4 x nvidia/gpu (2 free)': 1 },
    });
    expect(server.evals.get(evaluation.BlockedEval).Status).toBe("blocked");

    server.allocs.updateFromClient(live("first").map((alloc) => ({ ID: alloc.ID, ClientStatus: "complete" })));
    expect(live("second")).toHaveLength(1);
    expect(idsOf(live("second")[0]!)).toHaveLength(4);
  });

  test("a node without the device is filtered out, naming what is missing", () => {
    const { server, live } = setup([gpus("Tesla T4", 2, 16384)]);
    const response = server.jobs.register(gpuJob("many", { Name: "nvidia/gpu", Count: 3 }));
    const fpga = server.jobs.register(gpuJob("fpga", { Name: "xilinx/fpga" }));
    expect(live("many")).toHaveLength(0);
    expect(server.evals.get(response.EvalID).FailedTGAllocs?.web).toMatchObject({ NodesFiltered: 1, ConstraintFiltered: { 'missing devices: 3 x nvidia/gpu': 1 } });
    expect(server.evals.get(fpga.EvalID).FailedTGAllocs?.web?.ConstraintFiltered).toEqual({ 'missing devices: 1 x xilinx/fpga': 1 });
  });

  test("constraints pick the group whose attributes hold, comparing across units", () => {
    const { server, live } = setup([gpus("Tesla T4", 2, 16384, "t4"), gpus("A100", 2, 81920, "a100")]);
    server.jobs.register(
      gpuJob("big", { Name: "nvidia/gpu", Count: 1, Constraints: [{ LTarget: "${device.attr.memory}", Operand: ">", RTarget: "20 GiB" }] }),
    );
    server.jobs.register(gpuJob("t4", { Name: "nvidia/gpu", Count: 1, Constraints: [{ LTarget: "${device.model}", Operand: "regexp", RTarget: "^Tesla" }] }));
    const none = server.jobs.register(
      gpuJob("none", { Name: "nvidia/gpu", Count: 1, Constraints: [{ LTarget: "${device.attr.memory}", Operand: ">", RTarget: "100 GB" }] }),
    );
    expect(live("big")[0]!.AllocatedResources.Tasks.srv!.Devices[0]!.Name).toBe("A100");
    expect(live("t4")[0]!.AllocatedResources.Tasks.srv!.Devices[0]!.Name).toBe("Tesla T4");
    expect(live("none")).toHaveLength(0);
    expect(server.evals.get(none.EvalID).FailedTGAllocs?.web?.ConstraintFiltered).toEqual({ 'missing devices: 1 x nvidia/gpu': 1 });
  });

  test("affinities prefer the group they match", () => {
    const { server, live } = setup([gpus("Tesla T4", 2, 16384, "t4"), gpus("A100", 2, 81920, "a100")]);
    server.jobs.register(gpuJob("pref", { Name: "nvidia/gpu", Count: 1, Affinities: [{ LTarget: "${device.model}", Operand: "=", RTarget: "A100", Weight: 50 }] }));
    server.jobs.register(gpuJob("avoid", { Name: "nvidia/gpu", Count: 1, Affinities: [{ LTarget: "${device.model}", Operand: "=", RTarget: "Tesla T4", Weight: -50 }] }));
    expect(live("pref")[0]!.AllocatedResources.Tasks.srv!.Devices[0]!.Name).toBe("A100");
    expect(live("avoid")[0]!.AllocatedResources.Tasks.srv!.Devices[0]!.Name).toBe("A100");
  });

  test("unhealthy instances are never given", () => {
    const group = gpus("Tesla T4", 2, 16384);
    group.Instances[0]!.Healthy = false;
    const { server, live } = setup([group]);
    server.jobs.register(gpuJob("one", { Name: "gpu", Count: 1 }));
    expect(idsOf(live("one")[0]!)).toEqual(["GPU-Tesla T4-1"]);
    const two = server.jobs.register(gpuJob("two", { Name: "gpu", Count: 2 }));
    expect(server.evals.get(two.EvalID).FailedTGAllocs?.web?.ConstraintFiltered).toEqual({ 'missing devices: 2 x gpu': 1 });
  });

  test("devices the node reports later are offered to the placements waiting for them", () => {
    const { server, node, live } = setup([]);
    const response = server.jobs.register(gpuJob("late", { Name: "nvidia/gpu", Count: 1 }));
    expect(server.evals.get(response.EvalID).FailedTGAllocs?.web?.ConstraintFiltered).toEqual({ 'missing devices: 1 x nvidia/gpu': 1 });
    server.nodes.upsert({ ...node, NodeResources: { ...node.NodeResources, Devices: [gpus("Tesla T4", 1, 16384)] } });
    expect(idsOf(live("late")[0]!)).toEqual(["GPU-Tesla T4-0"]);
  });

  test("reserved instances are persisted with the alloc and stay taken after a server restart", () => {
    const { server, node, live, dataDir } = setup([gpus("Tesla T4", 2, 16384)]);
    server.jobs.register(gpuJob("kept", { Name: "gpu", Count: 1 }));
    const before = idsOf(live("kept")[0]!);
    server.close();

    const { server: reopened } = openTestServer({ dataDir });
    const kept = reopened.nodes.allocations(node.ID).find((alloc) => alloc.JobID === "kept")!;
    expect(idsOf(kept)).toEqual(before);
    reopened.jobs.register(gpuJob("next", { Name: "gpu", Count: 1 }));
    const next = reopened.nodes.allocations(node.ID).find((alloc) => alloc.JobID === "next")!;
    expect(idsOf(next)).toHaveLength(1);
    expect(idsOf(next)).not.toEqual(before);
    reopened.close();
  });
});
