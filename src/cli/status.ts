/**
 * `drover status [options] [id]`: Nomad's catch-all status. Without an ID,
 * the jobs; with one, the job, allocation, node, evaluation or deployment
 * it names (a prefix is enough), found with the search API.
 */
import { allocStatus } from "./alloc/status.ts";
import { ADDRESS_USAGE, OUTPUT_FLAGS, OUTPUT_USAGE, withFlags, type Subcommand } from "./command.ts";
import { DEPLOYMENT_SUBCOMMANDS } from "./deployment/index.ts";
import { EVAL_SUBCOMMANDS } from "./eval/index.ts";
import { AgentError } from "./http-client.ts";
import { jobStatus } from "./job/status.ts";
import { nodeStatus } from "./node/status.ts";
import { AmbiguousPrefixError } from "./prefix.ts";

interface SearchResponse {
  Matches: Record<string, string[] | null>;
}

/** The search contexts, each with the status command that shows a match. */
const CONTEXTS: readonly [string, Subcommand][] = [
  ["jobs", jobStatus],
  ["allocs", allocStatus],
  ["nodes", nodeStatus],
  ["evals", EVAL_SUBCOMMANDS.status],
  ["deployment", DEPLOYMENT_SUBCOMMANDS.status],
];

export const status: Subcommand = {
  summary: "Display the status output for a resource",
  usage: `Usage: drover status [options] [id]

  Without an ID: every job. With an ID or a prefix of one: the status of the
  job, allocation, node, evaluation or deployment it names.

Options:
${ADDRESS_USAGE}
${OUTPUT_USAGE}`,
  flags: withFlags(OUTPUT_FLAGS, { booleans: ["stats"] }),
  async run(args) {
    const [id, ...rest] = args.flags.positionals;
    if (id === undefined || rest.length > 0) return jobStatus.run(args);
    const { Matches } = await args.client.write<SearchResponse>("PUT", "/v1/search", { Prefix: id, Context: "all" });
    const found = CONTEXTS.filter(([context]) => (Matches[context] ?? []).length > 0);
    if (found.length === 0) throw new AgentError(404, `No matches found for "${id}"`);
    if (found.length > 1) throw new AmbiguousPrefixError(`Multiple matches found for "${id}": ${found.map(([context]) => context).join(", ")}; use a longer prefix or the command for its kind`);
    const [context, command] = found[0]!;
    const matches = Matches[context]!;
    // A job prefix shared by several jobs is job status's to explain; an exact job ID wins.
    const target = context === "jobs" && matches.includes(id) ? id : matches.length === 1 ? matches[0]! : id;
    return command.run({ ...args, flags: { ...args.flags, positionals: [target] } });
  },
};
