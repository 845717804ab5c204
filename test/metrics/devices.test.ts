import { expect, test } from "bun:test";
import { deviceMetrics, gaugeSuffix } from "../../src/metrics/devices.ts";
import { Metrics } from "../../src/metrics/registry.ts";
import type { DeviceGroupStats } from "../../src/structs/device.ts";

function reading(ids: string[]): DeviceGroupStats[] {
  const instance = (used: number) => ({
    Summary: null,
    Stats: {
      Nested: null,
      Attributes: {
        "GPU utilization": { IntNumeratorVal: 42, Unit: "%", Desc: "busy" },
        "Memory state": { IntNumeratorVal: used, IntDenominatorVal: 15360, Unit: "MiB" },
        Temperature: { StringVal: "N/A", Unit: "C" },
      },
    },
    Timestamp: new Date(0).toISOString(),
  });
  return [{ Vendor: "nvidia", Type: "gpu", Name: "Tesla T4", InstanceStats: Object.fromEntries(ids.map((id, i) => [id, instance(100 + i)])) }];
}

test("each device's numeric statistics are gauges labelled by the device; a device that goes takes its series", async () => {
  const metrics = new Metrics({ node_id: "n" });
  const publish = deviceMetrics(metrics);
  publish(reading(["GPU-a", "GPU-b"]));
  const labels = (id: string) => `device_vendor="nvidia",device_type="gpu",device_name="Tesla T4",device_id="${id}"`;
  let text = await metrics.prometheus();
  expect(text).toContain(`nomad_client_host_device_gpu_utilization{${labels("GPU-a")},node_id="n"} 42`);
  expect(text).toContain(`nomad_client_host_device_memory_state{${labels("GPU-b")},node_id="n"} 101`);
  expect(text).toContain(`nomad_client_host_device_memory_state_max{${labels("GPU-b")},node_id="n"} 15360`);
  expect(text).not.toContain("temperature");

  publish(reading(["GPU-a"]));
  text = await metrics.prometheus();
  expect(text).toContain(labels("GPU-a"));
  expect(text).not.toContain(labels("GPU-b"));
  const json = await metrics.json();
  expect(json.Gauges.find((gauge) => gauge.Name === "nomad.client.host.device.gpu_utilization")?.Labels.device_id).toBe("GPU-a");
});

test("statistic names become gauge names", () => {
  expect(gaugeSuffix("GPU utilization")).toBe("gpu_utilization");
  expect(gaugeSuffix("ECC L1 errors")).toBe("ecc_l1_errors");
  expect(gaugeSuffix("BAR1 buffer state")).toBe("bar1_buffer_state");
});
