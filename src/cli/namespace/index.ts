/**
 * `drover namespace list|status|apply|delete`: namespaces, against the
 * agent's /v1/namespaces and /v1/namespace/:name (Nomad 1.6's API shapes):
 *
 *   apply   PUT    /v1/namespace   {Name, Description, Quota, Meta}
 *   delete  DELETE /v1/namespace/:name
 */
import { readFileSync } from "node:fs";
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, dispatch, positionals, printData, printList, processIo, type Io, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatKV } from "../format.ts";
import { AgentError, type AgentClient } from "../http-client.ts";
import { AmbiguousPrefixError } from "../prefix.ts";

interface Namespace {
  Name: string;
  Description: string;
  Quota: string;
  Capabilities?: { EnabledTaskDrivers?: string[] | null; DisabledTaskDrivers?: string[] | null } | null;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Namespaces are few: an exact name wins, else a unique prefix. */
async function resolveNamespace(client: AgentClient, prefix: string): Promise<Namespace> {
  const { body } = await client.get<Namespace[]>("/v1/namespaces", { prefix });
  const matches = body.filter((ns) => ns.Name.startsWith(prefix));
  const exact = matches.find((ns) => ns.Name === prefix);
  if (exact) return exact;
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new AgentError(404, `no namespace with prefix or name "${prefix}" found`);
  throw new AmbiguousPrefixError(`Prefix matched multiple namespaces: ${matches.map((ns) => ns.Name).join(", ")}`);
}

const namespaceList: Subcommand = {
  summary: "List namespaces",
  usage: `Usage: drover namespace list [options]

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<Namespace[]>("/v1/namespaces");
    printList(io, flags, body, "No namespaces found", ["Name", "Description"], (ns) => [ns.Name, ns.Description]);
    return 0;
  },
};

const namespaceStatus: Subcommand = {
  summary: "Display a namespace's status",
  usage: `Usage: drover namespace status [options] <namespace>

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one namespace");
    const ns = await resolveNamespace(client, prefix!);
    if (printData(io, flags, ns)) return 0;
    io.print(
      formatKV([
        ["Name", ns.Name],
        ["Description", ns.Description],
        ["Quota", ns.Quota],
        ["EnabledDrivers", ns.Capabilities?.EnabledTaskDrivers?.join(",") || "*"],
        ["DisabledDrivers", ns.Capabilities?.DisabledTaskDrivers?.join(",") ?? ""],
      ]),
    );
    const meta = Object.entries(ns.Meta ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
    if (meta.length > 0) io.print(`\nMetadata\n${formatKV(meta)}`);
    return 0;
  },
};

function readSpec(path: string): Partial<Namespace> {
  let text: string;
  try {
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (err) {
    throw new UsageError(`Failed to read file: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as Partial<Namespace>;
  } catch (err) {
    throw new UsageError(`Failed to parse namespace specification: ${(err as Error).message} (drover reads namespace files as JSON)`);
  }
}

const namespaceApply: Subcommand = {
  summary: "Create or update a namespace",
  usage: `Usage: drover namespace apply [options] <namespace>
       drover namespace apply [options] -json <path>

  Creates the namespace, or updates its description. With -json the
  argument is a JSON namespace specification ("-": stdin).

Options:
${ADDRESS_USAGE}
  -description <text>  The namespace's description.
  -quota <name>         Accepted for Nomad's scripts (drover has no quotas).
  -json                 The argument is a JSON specification file.`,
  flags: { booleans: ["json"], strings: ["description", "quota"] },
  async run({ flags, client, io }) {
    const [argument] = positionals(flags, 1, 1, "a namespace name or specification file");
    let namespace: Partial<Namespace>;
    if (flags.booleans.json) namespace = readSpec(argument!);
    else {
      const { body: existing } = await client.get<Namespace[]>("/v1/namespaces", { prefix: argument });
      const current = existing.find((ns) => ns.Name === argument);
      namespace = { ...(current ?? { Name: argument! }) };
      if (flags.strings.description !== undefined) namespace.Description = flags.strings.description;
      if (flags.strings.quota !== undefined) namespace.Quota = flags.strings.quota;
    }
    if (!namespace.Name) throw new UsageError("the namespace needs a Name");
    await client.request("PUT", "/v1/namespace", { body: namespace });
    io.print(`Successfully applied namespace "${namespace.Name}"!`);
    return 0;
  },
};

const namespaceDelete: Subcommand = {
  summary: "Delete a namespace",
  usage: `Usage: drover namespace delete [options] <namespace>

Options:
${ADDRESS_USAGE}`,
  flags: {},
  async run({ flags, client, io }) {
    const [name] = positionals(flags, 1, 1, "one namespace");
    await client.request("DELETE", `/v1/namespace/${encodeURIComponent(name!)}`);
    io.print(`Successfully deleted namespace "${name}"!`);
    return 0;
  },
};

export const NAMESPACE_SUBCOMMANDS = { apply: namespaceApply, delete: namespaceDelete, list: namespaceList, status: namespaceStatus };

export function namespaceCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("namespace", NAMESPACE_SUBCOMMANDS, argv, io);
}
