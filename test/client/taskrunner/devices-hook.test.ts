import { expect, test } from "bun:test";
import { devicesHook } from "../../../src/client/taskrunner/hooks/devices.ts";
import { parseJobFile } from "../../../src/jobspec/index.ts";
import { clientEndpoint } from "../../../src/server/client-endpoint.ts";
import type { AllocatedDeviceResource } from "../../../src/structs/device.ts";
import { openTestServer, testNode } from "../../server/fixtures.ts";
import { waitFor } from "../../helpers/index.ts";
import { allocRunner, job, task } from "../fixtures.ts";

test("a task starts with what its device plugin gives for the instances placement reserved", async () => {
  const { server } = openTestServer();
  const endpoint = clientEndpoint(server);
  const devices = [
    {
      Vendor: "nvidia",
      Type: "gpu",
      Name: "Tesla T4",
      Instances: ["GPU-0", "GPU-1", "GPU-2"].map((ID) => ({ ID, Healthy: true, HealthDescription: "", Locality: null })),
      Attributes: {},
    },
  ];
  const node = testNode({ NodeResources: { ...testNode().NodeResources, Devices: devices } });
  await endpoint.registerNode(node);
  const hcl = job([task("gpu", "run", 'resources {\n device "nvidia/gpu" {\n count = 2\n }\n }'), task("plain", "run")]);
  server.jobs.register(await parseJobFile("job.hcl", hcl), {});
  const [alloc] = (await endpoint.watchAllocs(node.ID, 0)).allocs;

  const asked: AllocatedDeviceResource[] = [];
  const reserver = {
    reserve: (allocated: AllocatedDeviceResource) => {
      asked.push(allocated);
      return {
        env: { NVIDIA_VISIBLE_DEVICES: allocated.DeviceIDs.join(",") },
        mounts: [{ taskPath: "/opt/nvidia", hostPath: "/usr/lib", readOnly: true }],
        devices: allocated.DeviceIDs.map((_, i) => ({ taskPath: `/dev/nvidia${i}`, hostPath: `/dev/nvidia${i}`, permissions: "rwm" })),
      };
    },
  };
  const { runner, driver } = allocRunner(structuredClone(alloc!), { taskHooks: () => [devicesHook(reserver)] });
  void runner.run();
  await waitFor("both tasks started", () => driver.tasks.size === 2);

  const config = (name: string) => [...driver.tasks.values()].find((t) => t.config.taskName === name)!.config;
  expect(asked).toEqual([{ Vendor: "nvidia", Type: "gpu", Name: "Tesla T4", DeviceIDs: ["GPU-0", "GPU-1"] }]);
  expect(config("gpu").env.NVIDIA_VISIBLE_DEVICES).toBe("GPU-0,GPU-1");
  expect(config("gpu").devices).toEqual([
    { taskPath: "/dev/nvidia0", hostPath: "/dev/nvidia0", permissions: "rwm" },
    { taskPath: "/dev/nvidia1", hostPath: "/dev/nvidia1", permissions: "rwm" },
  ]);
  expect(config("gpu").mounts).toEqual([{ taskPath: "/opt/nvidia", hostPath: "/usr/lib", readOnly: true }]);
  expect(config("plain").env.NVIDIA_VISIBLE_DEVICES).toBeUndefined();
  expect(config("plain").devices).toEqual([]);
  await runner.destroy();
});

test("a device the plugin no longer has fails the start with the plugin's reason", async () => {
  const { server } = openTestServer();
  const endpoint = clientEndpoint(server);
  const node = testNode({
    NodeResources: {
      ...testNode().NodeResources,
      Devices: [{ Vendor: "nvidia", Type: "gpu", Name: "T4", Instances: [{ ID: "GPU-0", Healthy: true, HealthDescription: "", Locality: null }], Attributes: {} }],
    },
  });
  await endpoint.registerNode(node);
  server.jobs.register(await parseJobFile("job.hcl", job([task("gpu", "run", 'resources {\n device "gpu" {}\n }')])), {});
  const [alloc] = (await endpoint.watchAllocs(node.ID, 0)).allocs;
  const reserver = {
    reserve: () => {
      throw new Error("unknown NVIDIA device IDs: GPU-0");
    },
  };
  const { runner, driver } = allocRunner(structuredClone(alloc!), { taskHooks: () => [devicesHook(reserver)] });
  await runner.run();
  expect(driver.tasks.size).toBe(0);
  const events = runner.taskStates().gpu!.Events.map((event) => event.SetupError ?? "");
  expect(events).toContain("devices: unknown NVIDIA device IDs: GPU-0");
});
