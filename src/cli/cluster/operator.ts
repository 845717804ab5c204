/**
 * `drover operator ...`: the operator commands that mean something on a
 * single-node drover agent: `raft list-peers` (the agent is its own and
 * only peer), `metrics`, and `root keyring list|rotate|remove` (the keyring
 * Variables and workload identities use, /v1/operator/keyring/...).
 */
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, withFlags, type Subcommand, type SubcommandGroup } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatList, formatNanos } from "../format.ts";
import type { RootKeyMeta } from "../../structs/keyring.ts";

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

/** Nomad's short key ID, as its keyring commands print it without -verbose. */
const SHORT_KEY_ID = 8;

/** Nomad's renderVariablesKeysResponse: Key, State, Create Time. */
function keyTable(keys: readonly RootKeyMeta[], verbose: boolean): string {
  return formatList([
    ["Key", "State", "Create Time"],
    ...keys.map((key) => [verbose ? key.KeyID : key.KeyID.slice(0, SHORT_KEY_ID), key.State, formatNanos(key.CreateTime)]),
  ]);
}

const keyringList: Subcommand = {
  summary: "Lists the root encryption keys",
  usage: `Usage: drover operator root keyring list [options]

Options:
${ADDRESS_USAGE}
  -verbose           Full key IDs.
${DATA_USAGE}`,
  flags: withFlags(DATA_FLAGS, { booleans: ["verbose"] }),
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<RootKeyMeta[]>("/v1/operator/keyring/keys");
    if (printData(io, flags, body)) return 0;
    io.print(keyTable(body, flags.booleans.verbose === true));
    return 0;
  },
};

const keyringRotate: Subcommand = {
  summary: "Rotates the root encryption key",
  usage: `Usage: drover operator root keyring rotate [options]

  Makes a new active key. Tokens and variables of the old keys still work.

Options:
${ADDRESS_USAGE}
  -full              Also re-encrypt every variable with the new key.
  -verbose           Full key ID.`,
  flags: { booleans: ["full", "verbose"] },
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const response = await client.request("PUT", "/v1/operator/keyring/rotate", { query: { full: flags.booleans.full ? true : undefined } });
    const { Key } = (await response.json()) as { Key: RootKeyMeta };
    io.print(keyTable([Key], flags.booleans.verbose === true));
    return 0;
  },
};

const keyringRemove: Subcommand = {
  summary: "Removes a root encryption key",
  usage: `Usage: drover operator root keyring remove [options] <key ID>

  Forgets an inactive key that nothing uses: tokens it signed no longer verify.

Options:
${ADDRESS_USAGE}
  -force             Remove it even while variables or running allocations' tokens use it.`,
  flags: { booleans: ["force"] },
  async run({ flags, client, io }) {
    const [keyId] = positionals(flags, 1, 1, "one argument: <key ID>");
    await client.request("DELETE", `/v1/operator/keyring/key/${encodeURIComponent(keyId!)}`, { query: { force: flags.booleans.force ? true : undefined } });
    io.print(`Removed encryption key ${keyId}`);
    return 0;
  },
};

export const operatorGroup: SubcommandGroup = {
  summary: "Provides cluster-level tools for Nomad operators",
  subcommands: {
    metrics: operatorMetrics,
    raft: { summary: "Provides access to the Raft subsystem", subcommands: { "list-peers": raftListPeers } },
    root: {
      summary: "Provides access to root encryption keys",
      subcommands: { keyring: { summary: "Manages the root encryption keys", subcommands: { list: keyringList, remove: keyringRemove, rotate: keyringRotate } } },
    },
  },
};
