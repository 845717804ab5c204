/** `drover node status [-json] [-verbose] [node]`: the nodes, or one node with its allocated resources and allocations. */
import { allocatedDemand, addDemand, holdsResources, nodeCapacity, NO_DEMAND } from "../../structs/resources.ts";
import { allocListStub, type Allocation } from "../../structs/alloc.ts";
import type { ApiNode, Node, NodeListStub } from "../../structs/node.ts";
import { ADDRESS_USAGE, OUTPUT_FLAGS, OUTPUT_USAGE, positionals, printData, printList, withFlags, type Subcommand } from "../command.ts";
import { formatBytes, formatKV, formatList, formatTime, goDuration, orNone, shortId } from "../format.ts";
import { AgentError, type AgentClient } from "../http-client.ts";
import { allocTable } from "../job/status.ts";
import { resolveNode } from "../prefix.ts";
import { targetNode } from "./target.ts";

/** The columns of Nomad's node list (formatNodeStubList). */
export const NODE_LIST_HEADER = ["ID", "DC", "Name", "Class", "Drain", "Eligibility", "Status"];

export function nodeListRow(node: NodeListStub, verbose: boolean): string[] {
  return [shortId(node.ID, verbose), node.Datacenter, node.Name, orNone(node.NodeClass), String(node.Drain), node.SchedulingEligibility, node.Status];
}

function drivers(node: Pick<Node, "Drivers">): string {
  return Object.entries(node.Drivers)
    .filter(([, info]) => info.Detected && info.Healthy)
    .map(([name]) => name)
    .sort()
    .join(",");
}

const BYTES_PER_MIB = 1024 * 1024;
/** Sizes in MiB as Nomad's node status rounds them (go-humanize's IBytes of the bytes). */
const mib = (megabytes: number) => formatBytes(megabytes * BYTES_PER_MIB);

/** What node status reads of GET /v1/client/stats (Nomad's HostStats). */
interface HostStats {
  Uptime: number;
  CPUTicksConsumed: number;
  Memory: { Total: number; Used: number };
  DiskStats: { Device: string; Size: number; Used: number }[] | null;
}

/** What it reads of GET /v1/client/allocation/:id/stats. */
interface AllocUsage {
  ResourceUsage: { CpuStats: { TotalTicks: number }; MemoryStats: { RSS: number } };
}

/** The client's host stats; none when the agent answers without them (Nomad then leaves the lines out). */
async function hostStats(client: AgentClient): Promise<HostStats | undefined> {
  try {
    return (await client.get<HostStats>("/v1/client/stats")).body;
  } catch (err) {
    if (err instanceof AgentError) return undefined;
    throw err;
  }
}

/** Nomad's "Allocation Resource Utilization" and "Host Resource Utilization" tables. */
async function utilization(client: AgentClient, host: HostStats, node: ApiNode, running: readonly Allocation[], capacity: { cpu: number; memoryMb: number }): Promise<string> {
  const usages = await Promise.all(running.map(async (alloc) => (await client.get<AllocUsage>(`/v1/client/allocation/${alloc.ID}/stats`)).body.ResourceUsage));
  const cpu = usages.reduce((sum, usage) => sum + usage.CpuStats.TotalTicks, 0);
  const memory = usages.reduce((sum, usage) => sum + usage.MemoryStats.RSS, 0);
  const device = node.Attributes["unique.storage.volume"] ?? "";
  const disk = (host.DiskStats ?? []).find((stats) => stats.Device === device);
  return [
    "Allocation Resource Utilization",
    formatList([["CPU", "Memory"], [`${Math.floor(cpu)}/${capacity.cpu} MHz`, `${formatBytes(memory)}/${mib(capacity.memoryMb)}`]]),
    "",
    "Host Resource Utilization",
    formatList([
      ["CPU", "Memory", "Disk"],
      [
        `${Math.floor(host.CPUTicksConsumed)}/${capacity.cpu} MHz`,
        `${formatBytes(host.Memory.Used)}/${formatBytes(host.Memory.Total)}`,
        // Nomad has no figures for a device that is not a physical disk: it names it.
        disk ? `${formatBytes(disk.Used)}/${formatBytes(disk.Size)}` : `(${device})`,
      ],
    ]),
  ].join("\n");
}

export const nodeStatus: Subcommand = {
  summary: "Show the nodes' status",
  usage: `Usage: drover node status [options] [node]

  Without a node: every node. With a node ID (or a unique prefix): its
  details, allocated resources and allocations; -verbose adds its host
  volumes' paths.

Options:
${ADDRESS_USAGE}
  -self          The node of the agent addressed.
${OUTPUT_USAGE}`,
  flags: withFlags(OUTPUT_FLAGS, { booleans: ["self"] }),
  async run({ flags, client, io }) {
    const [given] = positionals(flags, 0, 1, "at most one node ID");
    const prefix = flags.booleans.self ? await targetNode(client, true, flags.positionals) : given;
    const verbose = flags.booleans.verbose ?? false;
    if (prefix === undefined) {
      const { body: nodes } = await client.get<NodeListStub[]>("/v1/nodes");
      printList(io, flags, nodes, "No nodes registered", NODE_LIST_HEADER, (node) => nodeListRow(node, verbose));
      return 0;
    }
    const stub = await resolveNode(client, prefix);
    const path = `/v1/node/${encodeURIComponent(stub.ID)}`;
    const [{ body: node }, { body: allocs }] = await Promise.all([client.get<ApiNode>(path), client.get<Allocation[]>(`${path}/allocations`)]);
    if (printData(io, flags, node)) return 0;
    const volumes = Object.values(node.HostVolumes ?? {}).sort((a, b) => a.Name.localeCompare(b.Name));
    const host = await hostStats(client);
    const pairs: [string, string][] = [
      ["ID", node.ID],
      ["Name", node.Name],
      ["Class", orNone(node.NodeClass)],
      ["DC", node.Datacenter],
      ["Drain", String(node.Drain)],
      ["Eligibility", node.SchedulingEligibility],
      ["Status", node.Status],
      // drover runs no CSI plugins; Nomad prints the lines all the same.
      ["CSI Controllers", "<none>"],
      ["CSI Drivers", "<none>"],
      ...(host === undefined ? [] : ([["Uptime", goDuration(host.Uptime)]] as [string, string][])),
      ["Host Volumes", orNone(volumes.map((volume) => volume.Name).join(","))],
      ["CSI Volumes", "<none>"],
      ["Driver Status", orNone(drivers(node))],
    ];
    io.print(formatKV(pairs));
    if (verbose && volumes.length > 0) {
      io.print(`\nHost Volumes\n${formatList([["Name", "ReadOnly", "Source"], ...volumes.map((volume) => [volume.Name, String(volume.ReadOnly), volume.Path])])}`);
    }
    const events = [...(node.Events ?? [])].reverse();
    if (events.length > 0) {
      io.print(`\nNode Events\n${formatList([["Time", "Subsystem", "Message"], ...events.map((event) => [formatTime(new Date(event.Timestamp)), event.Subsystem, event.Message])])}`);
    }
    const used = allocs.filter(holdsResources).reduce((sum, alloc) => addDemand(sum, allocatedDemand(alloc.AllocatedResources)), NO_DEMAND);
    const capacity = nodeCapacity(node);
    io.print(
      `\nAllocated Resources\n${formatList([
        ["CPU", "Memory", "Disk"],
        [`${used.cpu}/${capacity.cpu} MHz`, `${mib(used.memoryMb)}/${mib(capacity.memoryMb)}`, `${mib(used.diskMb)}/${mib(capacity.diskMb)}`],
      ])}`,
    );
    if (host) io.print(`\n${await utilization(client, host, node, allocs.filter((alloc) => alloc.ClientStatus === "running"), capacity)}`);
    const stubs = allocs.map(allocListStub).sort((a, b) => b.CreateIndex - a.CreateIndex);
    io.print(stubs.length === 0 ? "\nAllocations\nNo allocations placed" : `\nAllocations\n${allocTable(stubs, verbose)}`);
    return 0;
  },
};
