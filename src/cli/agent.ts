/**
 * `drover agent`: its flags; src/agent/run.ts does the rest.
 *
 *   drover agent -dev
 *   drover agent -config /etc/drover.d [-config extra.hcl] [-data-dir DIR] [-bind ADDR]
 *                [-http-port PORT] [-log-level LEVEL] [-log-json]
 *
 * The flags are Nomad's where Nomad has one; Nomad has none for the HTTP
 * port (only ports.http in a file), so -http-port is drover's own.
 */
import { runAgent } from "../agent/run.ts";
import type { ConfigOverrides } from "../config/load.ts";
import { parseFlags, UsageError, wantsHelp } from "./flags.ts";

export const AGENT_USAGE = `Usage: drover agent [options]

  Runs the drover agent: the HTTP API, the state database and the tasks of
  the allocations placed on this node.

Options:
  -dev               Single-node server and client on 127.0.0.1:4646 with a fresh
                     temporary data dir and raw_exec enabled. For trying drover out.
  -config <path>     Config file or directory (HCL or JSON); may be repeated. Later
                     files override earlier ones.
  -data-dir <path>   Where state, alloc dirs and the node ID live.
  -bind <addr>       Address the HTTP API binds (default 127.0.0.1), without a
                     port (as Nomad's -bind).
  -http-port <port>  Port of the HTTP API (default 4646; ports.http in a file).
  -log-level <lvl>   TRACE, DEBUG, INFO, WARN or ERROR (default INFO).
  -log-json          Log JSON lines instead of human-readable text.
`;

export function parseAgentFlags(argv: readonly string[]): ConfigOverrides {
  const flags = parseFlags(argv, {
    booleans: ["dev", "log-json"],
    strings: ["data-dir", "bind", "http-port", "log-level"],
    repeated: ["config"],
  });
  if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
  const overrides: ConfigOverrides = {
    dev: flags.booleans.dev ?? false,
    configPaths: flags.repeated.config ?? [],
  };
  if (flags.strings["data-dir"] !== undefined) overrides.dataDir = flags.strings["data-dir"];
  if (flags.strings.bind !== undefined) overrides.bindAddr = flags.strings.bind;
  const port = flags.strings["http-port"];
  if (port !== undefined) {
    if (!/^\d+$/.test(port) || Number(port) > 65535) throw new UsageError(`-http-port needs a port number (0-65535), got "${port}"`);
    overrides.httpPort = Number(port);
  }
  if (flags.strings["log-level"] !== undefined) overrides.logLevel = flags.strings["log-level"];
  if (flags.booleans["log-json"] !== undefined) overrides.logJson = flags.booleans["log-json"];
  return overrides;
}

/** `drover agent [flags]`: runs the agent until a signal stops it; resolves with the exit code. */
export async function agentCommand(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv)) {
    console.log(AGENT_USAGE);
    return 0;
  }
  return runAgent(parseAgentFlags(argv));
}
