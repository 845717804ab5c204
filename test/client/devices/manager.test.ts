import { describe, expect, test } from "bun:test";
import pino from "pino";
import { DeviceManager } from "../../../src/client/devices/manager.ts";
import type { DevicePlugin, DeviceReservation } from "../../../src/devices/plugin.ts";
import type { DeviceGroupStats, NodeDeviceResource } from "../../../src/structs/device.ts";
import { waitFor } from "../../helpers/index.ts";

/** A queue a test pushes reports into; the plugin's stream yields them in order. */
class Feed<T> {
  private items: T[] = [];
  private wake: (() => void) | undefined;
  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }
  async *stream(signal: AbortSignal): AsyncIterable<T> {
    signal.addEventListener("abort", () => this.wake?.());
    while (!signal.aborted) {
      const item = this.items.shift();
      if (item !== undefined) yield item;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

class StubPlugin implements DevicePlugin {
  readonly groups = new Feed<NodeDeviceResource[]>();
  readonly readings = new Feed<DeviceGroupStats[]>();
  readonly reserved: string[][] = [];
  constructor(readonly name: string) {}
  fingerprint(signal: AbortSignal) {
    return this.groups.stream(signal);
  }
  stats(_interval: number, signal: AbortSignal) {
    return this.readings.stream(signal);
  }
  reserve(ids: readonly string[]): DeviceReservation {
    this.reserved.push([...ids]);
    return { env: { [`${this.name.toUpperCase()}_DEVICES`]: ids.join(",") }, mounts: [], devices: [] };
  }
}

function group(vendor: string, name: string, ids: string[]): NodeDeviceResource {
  return {
    Vendor: vendor,
    Type: "gpu",
    Name: name,
    Instances: ids.map((ID) => ({ ID, Healthy: true, HealthDescription: "", Locality: null })),
    Attributes: {},
  };
}

function reading(vendor: string, name: string, ids: string[]): DeviceGroupStats {
  const stat = (id: string) => ({ Summary: { IntNumeratorVal: id.length, Unit: "MiB" }, Stats: { Nested: null, Attributes: {} }, Timestamp: new Date(0).toISOString() });
  return { Vendor: vendor, Type: "gpu", Name: name, InstanceStats: Object.fromEntries(ids.map((id) => [id, stat(id)])) };
}

async function started(plugins: StubPlugin[]) {
  const changes: number[] = [];
  const published: DeviceGroupStats[][] = [];
  const manager = new DeviceManager(plugins, {
    statsIntervalMs: 10,
    logger: pino({ level: "silent" }),
    onChange: () => changes.push(manager.devices().length),
    onStats: (stats) => published.push(stats),
  });
  const starting = manager.start();
  return { manager, changes, published, starting };
}

describe("the device manager", () => {
  test("waits for every plugin's first devices, then reports changes", async () => {
    const nvidia = new StubPlugin("nvidia");
    const other = new StubPlugin("other");
    const { manager, changes, starting } = await started([nvidia, other]);
    let done = false;
    void starting.then(() => (done = true));
    nvidia.groups.push([group("nvidia", "T4", ["a", "b"])]);
    await Bun.sleep(0);
    expect(done).toBe(false);
    other.groups.push([]);
    await starting;
    expect(manager.devices()).toEqual([group("nvidia", "T4", ["a", "b"])]);
    expect(changes).toEqual([]);

    other.groups.push([group("other", "X", ["x"])]);
    await waitFor("the change", () => changes.length === 1);
    expect(manager.devices().map((g) => g.Name)).toEqual(["T4", "X"]);
    await manager.stop();
  });

  test("a task's statistics are its own instances', looked up in the latest host reading", async () => {
    const nvidia = new StubPlugin("nvidia");
    const { manager, published, starting } = await started([nvidia]);
    nvidia.groups.push([group("nvidia", "T4", ["a", "b", "c"])]);
    await starting;
    expect(manager.statsFor([{ Vendor: "nvidia", Type: "gpu", Name: "T4", DeviceIDs: ["b"] }])).toEqual([]);

    nvidia.readings.push([reading("nvidia", "T4", ["a", "b", "c"])]);
    await waitFor("a reading", () => published.length === 1);
    expect(manager.hostStats()).toEqual([reading("nvidia", "T4", ["a", "b", "c"])]);
    expect(manager.statsFor([{ Vendor: "nvidia", Type: "gpu", Name: "T4", DeviceIDs: ["b", "c"] }])).toEqual([reading("nvidia", "T4", ["b", "c"])]);
    // Same instance ID in another group: not the task's.
    expect(manager.statsFor([{ Vendor: "nvidia", Type: "gpu", Name: "A100", DeviceIDs: ["a"] }])).toEqual([]);
    expect(manager.statsFor([])).toBeNull();

    nvidia.readings.push([reading("nvidia", "T4", ["a"])]);
    await waitFor("a second reading", () => published.length === 2);
    expect(manager.statsFor([{ Vendor: "nvidia", Type: "gpu", Name: "T4", DeviceIDs: ["b"] }])).toEqual([]);
    await manager.stop();
  });

  test("a reservation goes to the plugin that reported the group", async () => {
    const nvidia = new StubPlugin("nvidia");
    const other = new StubPlugin("other");
    const { manager, starting } = await started([nvidia, other]);
    nvidia.groups.push([group("nvidia", "T4", ["a"])]);
    other.groups.push([group("other", "X", ["x"])]);
    await starting;
    expect(manager.reserve({ Vendor: "other", Type: "gpu", Name: "X", DeviceIDs: ["x"] }).env).toEqual({ OTHER_DEVICES: "x" });
    expect(other.reserved).toEqual([["x"]]);
    expect(nvidia.reserved).toEqual([]);
    expect(() => manager.reserve({ Vendor: "nvidia", Type: "gpu", Name: "A100", DeviceIDs: ["z"] })).toThrow("no device plugin on this node has device group nvidia/gpu/A100");
    await manager.stop();
  });
});
