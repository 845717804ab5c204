/**
 * `drover alloc status [-json] [-stats] [-verbose] <alloc>`: an allocation,
 * its addresses, and each task's state, resources and events. As in Nomad,
 * a live alloc's task resources show current use beside the reservation
 * (`12/100 MHz`, `3.1 MiB/64 MiB`), and -stats adds every measured figure.
 */
import { allocTask, isClientTerminal, type Allocation } from "../../structs/alloc.ts";
import type { TaskState } from "../../structs/task-state.ts";
import { ADDRESS_USAGE, positionals, printData, type Io, type Subcommand } from "../command.ts";
import { formatBytes, formatKV, formatList, formatMb, formatNanos, formatTime, nanosAgo, orNone, shortId } from "../format.ts";
import type { AgentClient } from "../http-client.ts";
import { fetchAlloc, taskNames } from "./tasks.ts";

function addresses(alloc: Allocation): string | undefined {
  const network = alloc.AllocatedResources.Shared.Networks[0];
  if (!network) return undefined;
  const rows = [
    ...network.ReservedPorts.map((port) => [port.Label, "no", `${network.IP}:${port.Value}`]),
    ...network.DynamicPorts.map((port) => [port.Label, "yes", `${network.IP}:${port.Value}${port.To > 0 ? ` -> ${port.To}` : ""}`]),
  ];
  const mode = network.Mode ? ` (mode = "${network.Mode}")` : "";
  return rows.length === 0 ? undefined : `Allocation Addresses${mode}\n${formatList([["Label", "Dynamic", "Address"], ...rows])}`;
}

const orNA = (value: string | null) => (value ? formatTime(new Date(value)) : "N/A");

/** What this command reads of GET /v1/client/allocation/:id/stats (Nomad's AllocResourceUsage). */
interface TaskUsage {
  ResourceUsage: {
    MemoryStats: Record<string, number> & { RSS: number; Usage: number; Measured: string[] };
    CpuStats: Record<string, number> & { TotalTicks: number; Measured: string[] };
  };
}
type AllocUsage = { Tasks: Record<string, TaskUsage> };

/** The memory figure shown beside the reservation: RSS as Nomad shows it, else the cgroup's usage. */
function memoryInUse(memory: TaskUsage["ResourceUsage"]["MemoryStats"]): number {
  return memory.Measured.includes("RSS") ? memory.RSS : memory.Usage;
}

/** Nomad's -stats tables: each measured figure by its name, and the field holding it. */
const MEMORY_FIELDS: Readonly<Record<string, string>> = {
  RSS: "RSS",
  Cache: "Cache",
  Swap: "Swap",
  "Mapped File": "MappedFile",
  Usage: "Usage",
  "Max Usage": "MaxUsage",
  "Kernel Usage": "KernelUsage",
  "Kernel Max Usage": "KernelMaxUsage",
};
const percent = (value: number) => `${value.toFixed(2)}%`;
const CPU_FIELDS: Readonly<Record<string, readonly [string, (value: number) => string]>> = {
  Percent: ["Percent", percent],
  "Throttled Periods": ["ThrottledPeriods", String],
  "Throttled Time": ["ThrottledTime", String],
  "User Mode": ["UserMode", percent],
  "System Mode": ["SystemMode", percent],
};

function detailedUsage(usage: TaskUsage["ResourceUsage"]): string[] {
  const lines: string[] = [];
  const memory = [...usage.MemoryStats.Measured].sort().filter((name) => MEMORY_FIELDS[name] !== undefined);
  if (memory.length > 0) {
    lines.push("", "Memory Stats", formatList([memory, memory.map((name) => formatBytes(usage.MemoryStats[MEMORY_FIELDS[name]!] ?? 0))]));
  }
  const cpu = [...usage.CpuStats.Measured].sort().filter((name) => CPU_FIELDS[name] !== undefined);
  if (cpu.length > 0) {
    lines.push("", "CPU Stats", formatList([cpu, cpu.map((name) => CPU_FIELDS[name]![1](usage.CpuStats[CPU_FIELDS[name]![0]] ?? 0))]));
  }
  return lines;
}

function taskSection(alloc: Allocation, name: string, state: TaskState | undefined, usage: TaskUsage | undefined, detailed: boolean): string {
  const task = allocTask(alloc, name);
  const lifecycle = task?.Lifecycle ? ` (${task.Lifecycle.Hook}${task.Lifecycle.Sidecar ? " sidecar" : ""})` : "";
  const resources = alloc.AllocatedResources.Tasks[name];
  const lines = [`Task "${name}"${lifecycle} is "${state?.State ?? "pending"}"`];
  if (resources) {
    const live = usage?.ResourceUsage;
    const cpu = live ? `${Math.floor(live.CpuStats.TotalTicks)}/${resources.Cpu.CpuShares} MHz` : `${resources.Cpu.CpuShares} MHz`;
    const memory = live ? `${formatBytes(memoryInUse(live.MemoryStats))}/${formatMb(resources.Memory.MemoryMB)}` : formatMb(resources.Memory.MemoryMB);
    // Nomad's Addresses column lists a task's own networks, which only Nomad 0.x's task-level network blocks had.
    lines.push("Task Resources", formatList([["CPU", "Memory", "Disk", "Addresses"], [cpu, memory, formatMb(alloc.AllocatedResources.Shared.DiskMB), ""]]));
    if (live && detailed) lines.push(...detailedUsage(live));
  }
  if (state) {
    lines.push(
      "",
      "Task Events:",
      formatKV([
        ["Started At", orNA(state.StartedAt)],
        ["Finished At", orNA(state.FinishedAt)],
        ["Total Restarts", String(state.Restarts)],
        ["Last Restart", orNA(state.LastRestart)],
      ]),
      "",
      "Recent Events:",
      formatList([
        ["Time", "Type", "Description"],
        ...[...state.Events].reverse().map((event) => [formatNanos(event.Time), event.Type, event.DisplayMessage || event.Message]),
      ]),
    );
  }
  return lines.join("\n");
}

export const allocStatus: Subcommand = {
  summary: "Show an allocation's status, addresses and task events",
  usage: `Usage: drover alloc status [options] <allocation>

Options:
${ADDRESS_USAGE}
  -json       JSON for scripts (the allocation with its job).
  -stats      Every measured CPU and memory figure of each running task.
  -verbose    Full IDs.`,
  flags: { booleans: ["json", "stats", "verbose"], strings: ["t"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one allocation ID");
    const alloc = await fetchAlloc(client, prefix!);
    if (printData(io, flags, alloc)) return 0;
    const id = (value: string) => shortId(value, flags.booleans.verbose ?? false);
    const pairs: [string, string][] = [
      ["ID", alloc.ID],
      ["Eval ID", id(alloc.EvalID)],
      ["Name", alloc.Name],
      ["Node ID", id(alloc.NodeID)],
      ["Node Name", alloc.NodeName],
      ["Job ID", alloc.JobID],
      ["Job Version", String(alloc.Job.Version)],
      ["Client Status", alloc.ClientStatus],
      ["Client Description", orNone(alloc.ClientDescription)],
      ["Desired Status", alloc.DesiredStatus],
      ["Desired Description", orNone(alloc.DesiredDescription)],
      ["Created", nanosAgo(alloc.CreateTime)],
      ["Modified", nanosAgo(alloc.ModifyTime)],
    ];
    if (alloc.DeploymentID) {
      const healthy = alloc.DeploymentStatus?.Healthy;
      pairs.push(["Deployment ID", id(alloc.DeploymentID)], ["Deployment Health", healthy === true ? "healthy" : healthy === false ? "unhealthy" : "unset"]);
      if (alloc.DeploymentStatus?.Canary) pairs.push(["Canary", "true"]);
    }
    if (alloc.NextAllocation) pairs.push(["Replacement Alloc ID", id(alloc.NextAllocation)]);
    io.print(formatKV(pairs));
    const table = addresses(alloc);
    if (table) io.print(`\n${table}`);
    const usage = await fetchUsage(client, io, alloc);
    for (const name of taskNames(alloc)) {
      io.print(`\n${taskSection(alloc, name, alloc.TaskStates?.[name], usage?.Tasks[name], flags.booleans.stats ?? false)}`);
    }
    return 0;
  },
};

/** A live alloc's usage; a finished one has none. A failure is said, as Nomad says it, and the reservations shown alone. */
async function fetchUsage(client: AgentClient, io: Io, alloc: Allocation): Promise<AllocUsage | undefined> {
  if (isClientTerminal(alloc.ClientStatus)) return undefined;
  try {
    return (await client.get<AllocUsage>(`/v1/client/allocation/${encodeURIComponent(alloc.ID)}/stats`)).body;
  } catch (err) {
    io.error(`Couldn't retrieve stats: ${(err as Error).message}`);
    return undefined;
  }
}
