/**
 * `drover node drain|eligibility|config`: taking a node out of scheduling
 * and putting it back, as Nomad's node commands do.
 *
 *   drain        PUT /v1/node/:id/drain {DrainSpec, MarkEligible}
 *   eligibility  PUT /v1/node/:id/eligibility {Eligibility}
 *   config       GET /v1/agent/servers (-servers)
 */
import { parseDuration } from "../../lib/duration.ts";
import type { ApiNode } from "../../structs/node.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatTime } from "../format.ts";
import type { AgentClient } from "../http-client.ts";
import { targetNode } from "./target.ts";

/** Nomad's default drain deadline. */
const DEFAULT_DRAIN_DEADLINE = "1h";
const NANOS_PER_MS = 1e6;

function deadline(text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new UsageError(`-deadline: ${(err as Error).message}`);
  }
}

/** Waits (blocking queries) until the node's drain ends, printing Nomad's lines. */
async function monitorDrain(client: AgentClient, print: (line: string) => void, nodeId: string): Promise<void> {
  const stamp = () => formatTime(new Date());
  print(`${stamp()}: Ctrl-C to stop monitoring: will not cancel the node drain`);
  let index = 0;
  for (;;) {
    const { body: node, index: next } = await client.get<ApiNode>(`/v1/node/${nodeId}`, { index });
    if (!node.DrainStrategy) break;
    index = next;
  }
  print(`${stamp()}: Drain complete for node ${nodeId}`);
  print(`${stamp()}: All allocations on node "${nodeId}" have stopped`);
}

export const nodeDrain: Subcommand = {
  summary: "Toggle drain mode on a given node",
  usage: `Usage: drover node drain [options] <node>

  -enable moves the node's allocations elsewhere and keeps new ones off it;
  -disable ends a drain.

Options:
${ADDRESS_USAGE}
  -enable            Start draining.
  -disable           Stop draining.
  -deadline <dur>    Allocations left after this are stopped (default ${DEFAULT_DRAIN_DEADLINE}).
  -no-deadline       Wait as long as it takes.
  -force             Stop every allocation at once.
  -ignore-system     Leave system jobs' allocations running.
  -keep-ineligible   With -disable: keep the node ineligible for scheduling.
  -self              The node of the agent addressed.
  -detach            Return once the drain is set.
  -monitor           Only follow a drain already under way.
  -yes               Do not ask for confirmation (drover never asks).`,
  flags: {
    booleans: ["enable", "disable", "no-deadline", "force", "ignore-system", "keep-ineligible", "self", "detach", "monitor", "yes"],
    strings: ["deadline"],
  },
  async run({ flags, client, io }) {
    const { enable, disable, monitor, force } = flags.booleans;
    if (monitor && (enable || disable)) throw new UsageError("-monitor cannot be combined with -enable or -disable");
    if (!monitor && enable === disable) throw new UsageError("Either the '-enable' or '-disable' flag must be set, unless using '-monitor'");
    const modes = [flags.strings.deadline !== undefined, flags.booleans["no-deadline"], force].filter(Boolean).length;
    if (modes > 1) throw new UsageError("only one of -deadline, -no-deadline and -force may be given");
    const nodeId = await targetNode(client, flags.booleans.self ?? false, flags.positionals);
    if (monitor) {
      await monitorDrain(client, io.print, nodeId);
      return 0;
    }
    const deadlineNanos = force ? -1 : flags.booleans["no-deadline"] ? 0 : deadline(flags.strings.deadline ?? DEFAULT_DRAIN_DEADLINE) * NANOS_PER_MS;
    await client.write("PUT", `/v1/node/${nodeId}/drain`, {
      NodeID: nodeId,
      DrainSpec: enable ? { Deadline: deadlineNanos, IgnoreSystemJobs: flags.booleans["ignore-system"] ?? false } : null,
      MarkEligible: disable ? !flags.booleans["keep-ineligible"] : false,
    });
    io.print(`Node "${nodeId}" drain strategy ${enable ? "set" : "unset"}`);
    if (enable && !flags.booleans.detach) await monitorDrain(client, io.print, nodeId);
    return 0;
  },
};

export const nodeEligibility: Subcommand = {
  summary: "Toggle scheduling eligibility for a given node",
  usage: `Usage: drover node eligibility [options] <node>

Options:
${ADDRESS_USAGE}
  -enable     Let the scheduler place allocations on the node.
  -disable    Keep new allocations off the node (running ones stay).
  -self       The node of the agent addressed.`,
  flags: { booleans: ["enable", "disable", "self"] },
  async run({ flags, client, io }) {
    const { enable, disable } = flags.booleans;
    if (enable === disable) throw new UsageError("Either the '-enable' or '-disable' flag must be set");
    const nodeId = await targetNode(client, flags.booleans.self ?? false, flags.positionals);
    await client.write("PUT", `/v1/node/${nodeId}/eligibility`, { NodeID: nodeId, Eligibility: enable ? "eligible" : "ineligible" });
    io.print(`Node "${nodeId}" scheduling eligibility set: ${enable ? "eligible" : "ineligible"} for scheduling`);
    return 0;
  },
};

export const nodeConfig: Subcommand = {
  summary: "View or modify client configuration details",
  usage: `Usage: drover node config [options]

Options:
${ADDRESS_USAGE}
  -servers    List the servers the client knows (drover's agent is its own server:
              the list cannot be updated).`,
  flags: { booleans: ["servers"] },
  async run({ flags, client, io }) {
    if (!flags.booleans.servers) throw new UsageError("one of -servers or -update-servers is required");
    positionals(flags, 0, 0, "no arguments (drover's agent is its own server: the list cannot be updated)");
    const { body } = await client.get<string[]>("/v1/agent/servers");
    for (const server of body) io.print(server);
    return 0;
  },
};
