/**
 * What a task's device statistics cost at stats time, and that the cost
 * follows the task's own devices, not the host's.
 *
 *   lookup   the client's lookup of a task's GPU statistics in the host's latest
 *            reading (DeviceManager.statsFor, through its index by instance),
 *            per task, for 1 task and for 100 tasks of one GPU each, on hosts
 *            of 8 to 4096 GPUs; beside it, in the same run, a scan of every
 *            host instance per task (what the index replaces).
 *   request  GET /v1/client/allocation/:id/stats on the compiled agent over a
 *            fake NVML: an alloc of 1 task with 1 GPU on a host of 8 GPUs, the
 *            same alloc once the host has 64, and an alloc of 100 tasks (64 with
 *            a GPU each) on the host of 64; the floor is an alloc of 1 task
 *            without a GPU, in the same run.
 *
 *   bun bench/device-stats.ts [requests]
 */
import pino from "pino";
import { DeviceManager } from "../src/client/devices/manager.ts";
import type { DevicePlugin } from "../src/devices/plugin.ts";
import type { ChildProcess } from "../src/runtime/spawn.ts";
import type { AllocatedDeviceResource, DeviceGroupStats, DeviceStats, NodeDeviceResource } from "../src/structs/device.ts";
import { FakeNvml, fakeGpu } from "../test/devices/fake-nvml.ts";
import { sleep, waitFor } from "../test/helpers/index.ts";
import { benchAgent, machineLine, median, percentile, printTable } from "./lib.ts";

const REQUESTS = Number(process.argv[2] ?? 300);
/** Lookups per measurement in the in-process part: enough that the clock's resolution does not matter. */
const LOOKUP_ROUNDS = 20_000;
const HOST_SIZES = [8, 64, 512, 4096];
const MANY_TASKS = 100;
/** How often the fake host's GPUs are listed again, so the agent sees 64 soon after the file says so. */
const FINGERPRINT_PERIOD = "200ms";

// ---------------------------------------------------------------------------
// The lookup, in-process.

function hostReading(instances: number): DeviceGroupStats[] {
  const stat: DeviceStats = {
    Summary: { IntNumeratorVal: 100, IntDenominatorVal: 15360, Unit: "MiB" },
    Stats: { Nested: null, Attributes: { "GPU utilization": { IntNumeratorVal: 10, Unit: "%" } } },
    Timestamp: new Date(0).toISOString(),
  };
  // Eight models, as a large host might have, the instances spread over them.
  const groups: DeviceGroupStats[] = Array.from({ length: 8 }, (_, g) => ({ Vendor: "nvidia", Type: "gpu", Name: `model-${g}`, InstanceStats: {} }));
  for (let i = 0; i < instances; i++) groups[i % 8]!.InstanceStats[`GPU-${i}`] = stat;
  return groups.filter((group) => Object.keys(group.InstanceStats).length > 0);
}

/** A plugin that reports one fixed reading. */
function fixedPlugin(reading: DeviceGroupStats[]): DevicePlugin {
  const groups: NodeDeviceResource[] = reading.map((group) => ({ Vendor: group.Vendor, Type: group.Type, Name: group.Name, Instances: [], Attributes: {} }));
  return {
    name: "fixed",
    async *fingerprint() {
      yield groups;
    },
    async *stats() {
      yield reading;
    },
    reserve: () => ({ env: {}, mounts: [], devices: [] }),
  };
}

/** Each task's one GPU: spread over the host, so no two tasks of the 100 share one unless the host is smaller. */
function taskDevices(instances: number, tasks: number): AllocatedDeviceResource[][] {
  return Array.from({ length: tasks }, (_, t) => {
    const i = (t * 7919) % instances;
    return [{ Vendor: "nvidia", Type: "gpu", Name: `model-${i % 8}`, DeviceIDs: [`GPU-${i}`] }];
  });
}

/** What the index replaces: every host instance looked at for each of the task's devices. */
function scan(reading: DeviceGroupStats[], allocated: AllocatedDeviceResource[]): DeviceGroupStats[] {
  const out: DeviceGroupStats[] = [];
  for (const device of allocated) {
    const found: Record<string, DeviceStats> = {};
    for (const group of reading) {
      for (const [id, stats] of Object.entries(group.InstanceStats)) {
        if (group.Vendor === device.Vendor && group.Type === device.Type && group.Name === device.Name && device.DeviceIDs.includes(id)) found[id] = stats;
      }
    }
    out.push({ Vendor: device.Vendor, Type: device.Type, Name: device.Name, InstanceStats: found });
  }
  return out;
}

/** Nanoseconds per task of `lookup` over every task, best of three passes. */
function perTaskNs(tasks: AllocatedDeviceResource[][], lookup: (devices: AllocatedDeviceResource[]) => unknown): number {
  let best = Infinity;
  for (let pass = 0; pass < 3; pass++) {
    const rounds = Math.max(1, Math.floor(LOOKUP_ROUNDS / tasks.length));
    const started = Bun.nanoseconds();
    for (let round = 0; round < rounds; round++) for (const devices of tasks) lookup(devices);
    best = Math.min(best, (Bun.nanoseconds() - started) / (rounds * tasks.length));
  }
  return best;
}

const lookupRows: (string | number)[][] = [];
for (const instances of HOST_SIZES) {
  const reading = hostReading(instances);
  const manager = new DeviceManager([fixedPlugin(reading)], { statsIntervalMs: 60_000, logger: pino({ level: "silent" }) });
  await manager.start();
  while (manager.hostStats().length === 0) await sleep(1);
  for (const tasks of [1, MANY_TASKS]) {
    const devices = taskDevices(instances, tasks);
    lookupRows.push([String(instances), String(tasks), perTaskNs(devices, (d) => manager.statsFor(d)), perTaskNs(devices, (d) => scan(reading, d))]);
  }
  await manager.stop();
}

// ---------------------------------------------------------------------------
// The request, through the compiled agent over a fake NVML.

const bench = await benchAgent("drover-bench-devices-", {}, { plugin: { nvidia: { config: { fingerprint_period: FINGERPRINT_PERIOD } } } });
const fake = new FakeNvml(bench.dir, { gpus: 8 });
const { address } = bench;

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(`${address}${path}`, init);
  if (!res.ok) throw new Error(`${init?.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Polls `check` until it holds; the agent and its fake GPUs take their time on a loaded machine. */
const until = <T>(what: string, check: () => Promise<T>) => waitFor(what, check, { timeoutMs: 120_000, intervalMs: 50 });

interface Alloc {
  ID: string;
  ClientStatus: string;
}

/** Registers a job of one group whose tasks are `sleep`; the first `withGpu` of them ask for one GPU. */
async function runJob(id: string, tasks: number, withGpu: number): Promise<string> {
  const Tasks = Array.from({ length: tasks }, (_, t) => ({
    Name: `t${t}`,
    Driver: "raw_exec",
    Config: { command: "/bin/sleep", args: ["600"] },
    Resources: { CPU: 10, MemoryMB: 10, Devices: t < withGpu ? [{ Name: "nvidia/gpu", Count: 1 }] : [] },
    // Small logs, so a hundred tasks' log storage fits the group's disk.
    LogConfig: { MaxFiles: 1, MaxFileSizeMB: 1 },
  }));
  await api("/v1/jobs", { method: "POST", body: JSON.stringify({ Job: { ID: id, Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks }] } }) });
  const alloc = await until(`${id} running`, async () => (await api<Alloc[]>(`/v1/job/${id}/allocations`)).find((a) => a.ClientStatus === "running"));
  // Every task's first sample is in once the response lists them all.
  await until(`${id}'s stats`, async () => Object.keys((await api<{ Tasks: object }>(`/v1/client/allocation/${alloc.ID}/stats`)).Tasks).length === tasks);
  return alloc.ID;
}

/** Milliseconds per stats request of `allocId`, p50 and p90 over REQUESTS requests. */
async function timeRequests(allocId: string): Promise<{ p50: number; p90: number; deviceGroups: number }> {
  const times: number[] = [];
  let deviceGroups = 0;
  for (let i = 0; i < REQUESTS + 10; i++) {
    const started = performance.now();
    const res = await fetch(`${address}/v1/client/allocation/${allocId}/stats`);
    const body = (await res.json()) as { ResourceUsage: { DeviceStats: unknown[] } };
    // The first requests warm the route up; they are not counted.
    if (i >= 10) times.push(performance.now() - started);
    deviceGroups = body.ResourceUsage.DeviceStats.length;
  }
  return { p50: median(times), p90: percentile(times, 90), deviceGroups };
}

let agent: ChildProcess | undefined;
try {
  agent = await bench.start(fake.env);

  const floorAlloc = await runJob("floor", 1, 0);
  const oneAlloc = await runJob("one", 1, 1);
  const floor = await timeRequests(floorAlloc);
  const oneOf8 = await timeRequests(oneAlloc);

  fake.gpus = Array.from({ length: 64 }, (_, i) => fakeGpu(i));
  fake.write();
  await until("64 GPUs on the node", async () => {
    const nodes = await api<{ ID: string }[]>("/v1/nodes");
    const node = await api<{ NodeResources: { Devices: { Instances: unknown[] }[] } }>(`/v1/node/${nodes[0]!.ID}`);
    return node.NodeResources.Devices.reduce((sum, group) => sum + group.Instances.length, 0) === 64;
  });
  // The statistics of all 64 arrive with the next reading.
  await until("64 GPUs' statistics", async () => {
    const host = await api<{ DeviceStats: { InstanceStats: object }[] | null }>("/v1/client/stats");
    return (host.DeviceStats ?? []).reduce((sum, group) => sum + Object.keys(group.InstanceStats).length, 0) === 64;
  });
  const oneOf64 = await timeRequests(oneAlloc);
  await api("/v1/job/one?purge=true", { method: "DELETE" });
  await until("the GPU freed", async () => (await api<Alloc[]>("/v1/allocations")).every((a) => a.ClientStatus !== "running" || a.ID !== oneAlloc));
  const manyAlloc = await runJob("many", MANY_TASKS, 64);
  const many = await timeRequests(manyAlloc);

  printTable(
    "Looking up a task's GPU statistics in the host's latest reading (ns per task, best of 3)",
    ["host GPUs", "tasks (1 GPU each)", "drover: index by instance", "scan of every host instance (same run)"],
    lookupRows,
  );
  printTable(
    `GET /v1/client/allocation/:id/stats on the compiled agent, fake NVML (${REQUESTS} requests)`,
    ["alloc", "host GPUs", "device groups in the answer", "p50 ms", "p90 ms", "p50 ms per task"],
    [
      ["1 task, no GPU (floor, same run)", "8", String(floor.deviceGroups), floor.p50, floor.p90, floor.p50],
      ["1 task, 1 GPU", "8", String(oneOf8.deviceGroups), oneOf8.p50, oneOf8.p90, oneOf8.p50],
      ["1 task, 1 GPU", "64", String(oneOf64.deviceGroups), oneOf64.p50, oneOf64.p90, oneOf64.p50],
      [`${MANY_TASKS} tasks, 64 with 1 GPU`, "64", String(many.deviceGroups), many.p50, many.p90, many.p50 / MANY_TASKS],
    ],
  );
  console.log(machineLine());
} finally {
  agent?.kill("SIGKILL");
  await agent?.exited;
  await bench.cleanUp();
}
