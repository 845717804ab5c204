/** `drover agent-info [-json] [-t tmpl]`: the agent's own stats (GET /v1/agent/self), section by section as Nomad prints them. */
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, type Subcommand } from "../command.ts";

const sorted = <T>(record: Record<string, T>) => Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

export const agentInfo: Subcommand = {
  summary: "Display status information about the local agent",
  usage: `Usage: drover agent-info [options]

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<{ stats?: Record<string, Record<string, unknown>> }>("/v1/agent/self");
    if (printData(io, flags, body)) return 0;
    for (const [section, stats] of sorted(body.stats ?? {})) {
      io.print(section);
      for (const [key, value] of sorted(stats)) io.print(`  ${key} = ${typeof value === "string" ? value : JSON.stringify(value)}`);
    }
    return 0;
  },
};
