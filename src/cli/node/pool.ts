/**
 * `drover node pool list|info|apply|delete|nodes|jobs`: Nomad 1.6's node
 * pool commands, against /v1/node/pools and /v1/node/pool/:name.
 *
 *   apply   PUT    /v1/node/pools   from a node_pool "<name>" { ... } HCL file, or JSON with -json ("-": stdin)
 *   delete  DELETE /v1/node/pool/:name
 */
import { readFileSync } from "node:fs";
import * as v from "valibot";
import { formatIssues, ValidationError } from "../../lib/validation.ts";
import type { JobListStub } from "../../structs/job.ts";
import type { NodePool } from "../../structs/node-pool.ts";
import type { NodeListStub } from "../../structs/node.ts";
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, printList, withFlags, type Io, type Subcommand, type SubcommandGroup } from "../command.ts";
import { UsageError, type ParsedFlags } from "../flags.ts";
import { formatKV, formatList, orNone } from "../format.ts";
import { JOB_LIST_HEADER, jobListRow } from "../job/status.ts";
import { NODE_LIST_HEADER, nodeListRow } from "./status.ts";
import { AgentError, type AgentClient } from "../http-client.ts";
import { AmbiguousPrefixError } from "../prefix.ts";

const poolPath = (name: string) => `/v1/node/pool/${encodeURIComponent(name)}`;

/** Nomad's formatNodePoolList: its formatList shows an empty description as <none>. */
const poolTable = (pools: readonly NodePool[]) => formatList([["Name", "Description"], ...pools.map((pool) => [pool.Name, orNone(pool.Description)])]);

/** Nomad's nodePoolByPrefix: an exact name wins, else a unique prefix. */
async function resolvePool(client: AgentClient, prefix: string): Promise<NodePool> {
  const { body } = await client.get<NodePool[]>("/v1/node/pools", { prefix });
  const matches = body.filter((pool) => pool.Name.startsWith(prefix));
  const exact = matches.find((pool) => pool.Name === prefix);
  if (exact) return exact;
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new AgentError(404, `Error retrieving node pool: No node pool with prefix "${prefix}" found`);
  throw new AmbiguousPrefixError(`Prefix matched multiple node pools\n\n${poolTable(matches)}`);
}

const poolList: Subcommand = {
  summary: "List node pools",
  usage: `Usage: drover node pool list [options]

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<NodePool[]>("/v1/node/pools");
    if (!printData(io, flags, body)) io.print(poolTable(body));
    return 0;
  },
};

const poolInfo: Subcommand = {
  summary: "Fetch information on an existing node pool",
  usage: `Usage: drover node pool info [options] <node-pool>

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one argument: <node-pool>");
    const pool = await resolvePool(client, prefix!);
    if (printData(io, flags, pool)) return 0;
    io.print(formatKV([["Name", pool.Name], ["Description", orNone(pool.Description)]]));
    const meta = Object.entries(pool.Meta ?? {})
      .map(([key, value]): [string, string] => [key, orNone(value)])
      .sort(([a], [b]) => (a < b ? -1 : 1));
    io.print(`\nMetadata\n${meta.length > 0 ? formatKV(meta) : "No metadata"}`);
    const scheduler = pool.SchedulerConfiguration;
    const schedulerLines: [string, string][] = scheduler ? [["Scheduler Algorithm", scheduler.SchedulerAlgorithm]] : [];
    if (scheduler && scheduler.MemoryOversubscriptionEnabled !== null) schedulerLines.push(["Memory Oversubscription Enabled", String(scheduler.MemoryOversubscriptionEnabled)]);
    io.print(`\nScheduler Configuration\n${scheduler ? formatKV(schedulerLines) : "No scheduler configuration"}`);
    return 0;
  },
};

/** A node_pool block as hcl2json gives it: { node_pool: { <name>: [ { description, meta: [{}], scheduler_config: [{}] } ] } }. */
const OneBlock = <S extends v.GenericSchema>(schema: S) => v.pipe(v.array(schema), v.length(1, "must be written once"));
const HclPoolSpec = v.strictObject({
  node_pool: v.pipe(
    v.record(
      v.string(),
      OneBlock(
        v.strictObject({
          description: v.optional(v.string()),
          meta: v.optional(OneBlock(v.record(v.string(), v.string()))),
          scheduler_config: v.optional(
            OneBlock(v.strictObject({ scheduler_algorithm: v.optional(v.string()), memory_oversubscription_enabled: v.optional(v.boolean()) })),
          ),
        }),
      ),
    ),
    v.check((pools) => Object.keys(pools).length === 1, "a file holds one node_pool block"),
  ),
});

/** The API body of a node_pool HCL file (Nomad's nodePoolSpec). */
async function poolFromHcl(filename: string, text: string): Promise<Record<string, unknown>> {
  const { parseHcl } = await import("../../lib/hcl.ts");
  const parsed = v.safeParse(HclPoolSpec, await parseHcl(filename, text));
  if (!parsed.success) throw new ValidationError(filename, formatIssues(parsed.issues));
  const [name, [block]] = Object.entries(parsed.output.node_pool)[0]!;
  const scheduler = block!.scheduler_config?.[0];
  return {
    Name: name,
    Description: block!.description ?? "",
    Meta: block!.meta?.[0] ?? null,
    SchedulerConfiguration: scheduler
      ? { SchedulerAlgorithm: scheduler.scheduler_algorithm ?? "", MemoryOversubscriptionEnabled: scheduler.memory_oversubscription_enabled ?? null }
      : null,
  };
}

function readInput(path: string): string {
  try {
    return readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (err) {
    throw new UsageError(`Failed to read file "${path}": ${(err as Error).message}`);
  }
}

const poolApply: Subcommand = {
  summary: "Create or update a node pool",
  usage: `Usage: drover node pool apply [options] <input>

  Creates or updates the node pool <input> (a file, "-" for stdin)
  describes, as HCL:

    node_pool "prod" {
      description = "Production nodes"
      meta { env = "prod" }
    }

Options:
${ADDRESS_USAGE}
  -json  The input is the pool as JSON (the API's NodePool).`,
  flags: { booleans: ["json"] },
  async run({ flags, client, io }) {
    const [path] = positionals(flags, 1, 1, "one argument: <input>");
    const text = readInput(path!);
    let pool: Record<string, unknown>;
    if (flags.booleans.json) {
      try {
        pool = JSON.parse(text) as Record<string, unknown>;
      } catch (err) {
        throw new UsageError(`Failed to parse input content: ${(err as Error).message}`);
      }
    } else pool = await poolFromHcl(path === "-" ? "stdin.nomad.hcl" : path!, text);
    await client.request("PUT", "/v1/node/pools", { body: pool });
    io.print(`Successfully applied node pool "${String(pool.Name)}"!`);
    return 0;
  },
};

const poolDelete: Subcommand = {
  summary: "Delete a node pool",
  usage: `Usage: drover node pool delete [options] <node-pool>

Options:
${ADDRESS_USAGE}`,
  flags: {},
  async run({ flags, client, io }) {
    const [name] = positionals(flags, 1, 1, "one argument: <node-pool>");
    await client.request("DELETE", poolPath(name!));
    io.print(`Successfully deleted node pool "${name}"!`);
    return 0;
  },
};

/** Nomad prints "No nodes"/"No jobs" before it looks at -json. */
function printPoolList<T>(io: Io, flags: ParsedFlags, items: readonly T[], empty: string, header: string[], row: (item: T) => string[]): void {
  if (items.length === 0) io.print(empty);
  else printList(io, flags, items, empty, header, row);
}

const poolNodes: Subcommand = {
  summary: "Fetch a list of nodes in a node pool",
  usage: `Usage: drover node pool nodes [options] <node-pool>

Options:
${ADDRESS_USAGE}
${DATA_USAGE}
  -verbose       Full IDs.`,
  flags: withFlags(DATA_FLAGS, { booleans: ["verbose"] }),
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one argument: <node-pool>");
    const pool = await resolvePool(client, prefix!);
    const { body: nodes } = await client.get<NodeListStub[]>(`${poolPath(pool.Name)}/nodes`);
    printPoolList(io, flags, nodes, "No nodes", NODE_LIST_HEADER, (node) => nodeListRow(node, flags.booleans.verbose ?? false));
    return 0;
  },
};

const poolJobs: Subcommand = {
  summary: "Fetch a list of jobs in a node pool",
  usage: `Usage: drover node pool jobs [options] <node-pool>

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one argument: <node-pool>");
    const pool = await resolvePool(client, prefix!);
    const { body: jobs } = await client.get<JobListStub[]>(`${poolPath(pool.Name)}/jobs`);
    printPoolList(io, flags, jobs, "No jobs", JOB_LIST_HEADER, jobListRow);
    return 0;
  },
};

export const nodePool: SubcommandGroup = {
  summary: "Interact with node pools",
  subcommands: { apply: poolApply, delete: poolDelete, info: poolInfo, jobs: poolJobs, list: poolList, nodes: poolNodes },
};
