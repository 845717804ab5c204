/**
 * `drover operator ...`: the operator commands that mean something on a
 * single-node drover agent: `raft list-peers` (the agent is its own and
 * only peer) and `metrics`.
 */
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, withFlags, type Subcommand, type SubcommandGroup } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatList } from "../format.ts";

interface RaftServer {
  ID: string;
  Node: string;
  Address: string;
  Leader: boolean;
  Voter: boolean;
  RaftProtocol: string;
}

const raftListPeers: Subcommand = {
  summary: "Display the current Raft peer configuration",
  usage: `Usage: drover operator raft list-peers [options]

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: withFlags(DATA_FLAGS, { booleans: ["stale"] }),
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<{ Servers: RaftServer[] }>("/v1/operator/raft/configuration", { stale: flags.booleans.stale ? true : undefined });
    if (printData(io, flags, body)) return 0;
    io.print(
      formatList([
        ["Node", "ID", "Address", "State", "Voter", "RaftProtocol"],
        ...body.Servers.map((server) => [server.Node, server.ID, server.Address, server.Leader ? "leader" : "follower", String(server.Voter), server.RaftProtocol]),
      ]),
    );
    return 0;
  },
};

const METRIC_FORMATS = ["json", "prometheus"];

const operatorMetrics: Subcommand = {
  summary: "Retrieve runtime metrics of the agent",
  usage: `Usage: drover operator metrics [options]

Options:
${ADDRESS_USAGE}
  -format <json|prometheus>  The form of the metrics (default json).
  -pretty                    Indented JSON.
${DATA_USAGE}`,
  flags: withFlags(DATA_FLAGS, { booleans: ["pretty"], strings: ["format"] }),
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const format = flags.strings.format ?? "json";
    if (!METRIC_FORMATS.includes(format)) throw new UsageError(`-format must be json or prometheus, got "${format}"`);
    if (format === "prometheus") {
      io.write(await (await client.request("GET", "/v1/metrics", { query: { format } })).text());
      return 0;
    }
    const { body } = await client.get<unknown>("/v1/metrics");
    if (printData(io, flags, body)) return 0;
    io.print(flags.booleans.pretty ? JSON.stringify(body, null, 4) : JSON.stringify(body));
    return 0;
  },
};

export const operatorGroup: SubcommandGroup = {
  summary: "Provides cluster-level tools for Nomad operators",
  subcommands: {
    metrics: operatorMetrics,
    raft: { summary: "Provides access to the Raft subsystem", subcommands: { "list-peers": raftListPeers } },
  },
};
