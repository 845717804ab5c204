/** `drover node status [-json] [-verbose] [node]`: the nodes, or one node with its allocated resources and allocations. */
import { allocatedDemand, addDemand, holdsResources, nodeCapacity, NO_DEMAND } from "../../structs/resources.ts";
import { allocListStub, type Allocation } from "../../structs/alloc.ts";
import type { ApiNode, Node, NodeListStub } from "../../structs/node.ts";
import { ADDRESS_USAGE, OUTPUT_FLAGS, OUTPUT_USAGE, positionals, printData, printList, withFlags, type Subcommand } from "../command.ts";
import { formatKV, formatList, formatMb, orNone, shortId } from "../format.ts";
import { allocTable } from "../job/status.ts";
import { resolveNode } from "../prefix.ts";
import { targetNode } from "./target.ts";

function drivers(node: Pick<Node, "Drivers">): string {
  return Object.entries(node.Drivers)
    .filter(([, info]) => info.Detected && info.Healthy)
    .map(([name]) => name)
    .sort()
    .join(",");
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
      printList(io, flags, nodes, "No nodes registered", ["ID", "DC", "Name", "Class", "Drain", "Eligibility", "Status"], (node) => [
        shortId(node.ID, verbose),
        node.Datacenter,
        node.Name,
        orNone(node.NodeClass),
        String(node.Drain),
        node.SchedulingEligibility,
        node.Status,
      ]);
      return 0;
    }
    const stub = await resolveNode(client, prefix);
    const path = `/v1/node/${encodeURIComponent(stub.ID)}`;
    const [{ body: node }, { body: allocs }] = await Promise.all([client.get<ApiNode>(path), client.get<Allocation[]>(`${path}/allocations`)]);
    if (printData(io, flags, node)) return 0;
    const volumes = Object.values(node.HostVolumes ?? {}).sort((a, b) => a.Name.localeCompare(b.Name));
    io.print(
      formatKV([
        ["ID", node.ID],
        ["Name", node.Name],
        ["Class", orNone(node.NodeClass)],
        ["DC", node.Datacenter],
        ["Drain", String(node.Drain)],
        ["Eligibility", node.SchedulingEligibility],
        ["Status", node.Status],
        ["HTTP Address", node.HTTPAddr],
        ["Drivers", orNone(drivers(node))],
        ["Host Volumes", orNone(volumes.map((volume) => volume.Name).join(","))],
      ]),
    );
    if (verbose && volumes.length > 0) {
      io.print(`\nHost Volumes\n${formatList([["Name", "ReadOnly", "Source"], ...volumes.map((volume) => [volume.Name, String(volume.ReadOnly), volume.Path])])}`);
    }
    const used = allocs.filter(holdsResources).reduce((sum, alloc) => addDemand(sum, allocatedDemand(alloc.AllocatedResources)), NO_DEMAND);
    const capacity = nodeCapacity(node);
    io.print(
      `\nAllocated Resources\n${formatList([
        ["CPU", "Memory", "Disk"],
        [`${used.cpu}/${capacity.cpu} MHz`, `${formatMb(used.memoryMb)}/${formatMb(capacity.memoryMb)}`, `${formatMb(used.diskMb)}/${formatMb(capacity.diskMb)}`],
      ])}`,
    );
    const stubs = allocs.map(allocListStub).sort((a, b) => b.CreateIndex - a.CreateIndex);
    io.print(stubs.length === 0 ? "\nAllocations\nNo allocations placed" : `\nAllocations\n${allocTable(stubs, verbose)}`);
    return 0;
  },
};
