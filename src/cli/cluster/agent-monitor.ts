/** `drover monitor [-log-level L] [-json]`: stream the agent's log (GET /v1/agent/monitor, plain) until interrupted. */
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";

const LOG_LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"];

export const agentMonitor: Subcommand = {
  summary: "Stream logs from a Nomad agent",
  usage: `Usage: drover monitor [options]

  Prints the agent's log as it is written, at the given level, until
  interrupted.

Options:
${ADDRESS_USAGE}
  -log-level <level>  TRACE, DEBUG, INFO, WARN or ERROR (default INFO).
  -node-id <id>       Accepted for Nomad's scripts: drover's agent is its only node.
  -server-id <id>     Accepted for Nomad's scripts: drover's agent is its only server.
  -json               Log lines as JSON.`,
  flags: { booleans: ["json"], strings: ["log-level", "node-id", "server-id"] },
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const level = (flags.strings["log-level"] ?? "INFO").toUpperCase();
    if (!LOG_LEVELS.includes(level)) throw new UsageError(`-log-level must be one of ${LOG_LEVELS.join(", ")}, got "${flags.strings["log-level"]}"`);
    const response = await client.request("GET", "/v1/agent/monitor", { query: { log_level: level, log_json: flags.booleans.json ? true : undefined, plain: true } });
    if (!response.body) return 0;
    const reader = response.body.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) io.write(chunk.value);
    return 0;
  },
};
