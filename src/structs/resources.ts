/**
 * What an allocation needs and what a node has left, in Nomad's units (CPU
 * MHz, memory MB, disk MB). A group's tasks do not all run at once: prestart
 * tasks finish before the main tasks start and poststop tasks run after they
 * end, so a group needs the largest of its phases, with sidecars counted in
 * every phase they live through.
 */
import { isClientTerminal, type AllocatedResources, type Allocation } from "./alloc.ts";
import type { TaskGroup, TaskLifecycle } from "./job.ts";
import type { Node } from "./node.ts";

export interface Demand {
  cpu: number;
  memoryMb: number;
  diskMb: number;
}

export const DIMENSIONS = ["cpu", "memory", "disk"] as const;
export type Dimension = (typeof DIMENSIONS)[number];

interface TaskNeed {
  cpu: number;
  memoryMb: number;
  lifecycle: TaskLifecycle | null;
}

function phaseMax(tasks: readonly TaskNeed[], key: "cpu" | "memoryMb"): number {
  const sum = (list: readonly TaskNeed[]) => list.reduce((total, task) => total + task[key], 0);
  const sidecars = tasks.filter((task) => task.lifecycle?.Sidecar);
  const prestart = tasks.filter((task) => task.lifecycle?.Hook === "prestart" && !task.lifecycle.Sidecar);
  const poststop = tasks.filter((task) => task.lifecycle?.Hook === "poststop" && !task.lifecycle.Sidecar);
  const main = tasks.filter((task) => !task.lifecycle || (task.lifecycle.Hook === "poststart" && !task.lifecycle.Sidecar));
  return Math.max(sum([...sidecars, ...prestart]), sum([...sidecars, ...main]), sum(poststop));
}

function demandOf(tasks: readonly TaskNeed[], diskMb: number): Demand {
  return { cpu: phaseMax(tasks, "cpu"), memoryMb: phaseMax(tasks, "memoryMb"), diskMb };
}

export function groupDemand(group: TaskGroup): Demand {
  return demandOf(
    group.Tasks.map((task) => ({ cpu: task.Resources.CPU, memoryMb: task.Resources.MemoryMB, lifecycle: task.Lifecycle })),
    group.EphemeralDisk.SizeMB,
  );
}

export function allocatedDemand(resources: AllocatedResources): Demand {
  return demandOf(
    Object.entries(resources.Tasks).map(([name, task]) => ({
      cpu: task.Cpu.CpuShares,
      memoryMb: task.Memory.MemoryMB,
      lifecycle: resources.TaskLifecycles[name] ?? null,
    })),
    resources.Shared.DiskMB,
  );
}

/**
 * True while an alloc occupies its node: until the client reports it
 * finished. A stopped alloc still running its tasks keeps its resources and
 * ports, so a replacement never shares a port with the process it replaces.
 */
export function holdsResources(alloc: Allocation): boolean {
  return !isClientTerminal(alloc.ClientStatus);
}

/** The node's capacity less its reservations. */
export function nodeCapacity(node: { NodeResources: Pick<Node["NodeResources"], "Cpu" | "Memory" | "Disk">; ReservedResources: Node["ReservedResources"] }): Demand {
  return {
    cpu: node.NodeResources.Cpu.CpuShares - node.ReservedResources.Cpu.CpuShares,
    memoryMb: node.NodeResources.Memory.MemoryMB - node.ReservedResources.Memory.MemoryMB,
    diskMb: node.NodeResources.Disk.DiskMB - node.ReservedResources.Disk.DiskMB,
  };
}

export function addDemand(a: Demand, b: Demand): Demand {
  return { cpu: a.cpu + b.cpu, memoryMb: a.memoryMb + b.memoryMb, diskMb: a.diskMb + b.diskMb };
}

export const NO_DEMAND: Demand = { cpu: 0, memoryMb: 0, diskMb: 0 };

/** The first dimension in which `used + want` exceeds `capacity`, if any. */
export function exhaustedDimension(capacity: Demand, used: Demand, want: Demand): Dimension | undefined {
  if (used.cpu + want.cpu > capacity.cpu) return "cpu";
  if (used.memoryMb + want.memoryMb > capacity.memoryMb) return "memory";
  if (used.diskMb + want.diskMb > capacity.diskMb) return "disk";
  return undefined;
}
