/**
 * `drover agent`: flags, then the agent's start-up and its signals.
 *
 *   drover agent -dev
 *   drover agent -config /etc/drover.d [-config extra.hcl] [-data-dir DIR] [-bind ADDR]
 *                [-log-level LEVEL] [-log-json]
 */
import { createLogger } from "../lib/logger.ts";
import { parseFlags, UsageError, wantsHelp } from "../cli/flags.ts";
import { openClientState } from "../state/client/db.ts";
import { Agent } from "./agent.ts";
import { loadAgentConfig, type ConfigOverrides } from "./config/load.ts";
import { prepareDataDir } from "./data-dir.ts";
import { fingerprint } from "./fingerprint/index.ts";

export const AGENT_USAGE = `Usage: drover agent [options]

  Runs the drover agent: the HTTP API, the state database and the tasks of
  the allocations placed on this node.

Options:
  -dev               Single-node server and client on 127.0.0.1:4646 with a fresh
                     temporary data dir and raw_exec enabled. For trying drover out.
  -config <path>     Config file or directory (HCL or JSON); may be repeated. Later
                     files override earlier ones.
  -data-dir <path>   Where state, alloc dirs and the node ID live.
  -bind <addr>       Address the HTTP API binds (default 127.0.0.1).
  -log-level <lvl>   TRACE, DEBUG, INFO, WARN or ERROR (default INFO).
  -log-json          Log JSON lines instead of human-readable text.
`;

export function parseAgentFlags(argv: readonly string[]): ConfigOverrides {
  const flags = parseFlags(argv, {
    booleans: ["dev", "log-json"],
    strings: ["data-dir", "bind", "log-level"],
    repeated: ["config"],
  });
  if (flags.positionals.length > 0) throw new UsageError(`unexpected argument "${flags.positionals[0]}"`);
  const overrides: ConfigOverrides = {
    dev: flags.booleans.dev ?? false,
    configPaths: flags.repeated.config ?? [],
  };
  if (flags.strings["data-dir"] !== undefined) overrides.dataDir = flags.strings["data-dir"];
  if (flags.strings.bind !== undefined) overrides.bindAddr = flags.strings.bind;
  if (flags.strings["log-level"] !== undefined) overrides.logLevel = flags.strings["log-level"];
  if (flags.booleans["log-json"] !== undefined) overrides.logJson = flags.booleans["log-json"];
  return overrides;
}

/** Runs the agent until a signal stops it; resolves with the exit code. */
export async function runAgent(argv: readonly string[]): Promise<number> {
  if (wantsHelp(argv)) {
    console.log(AGENT_USAGE);
    return 0;
  }
  const overrides = parseAgentFlags(argv);
  const { config, files } = await loadAgentConfig(overrides);
  const dataDir = prepareDataDir(config, overrides.dev);
  const logger = await createLogger({ level: config.log_level, json: config.log_json });
  let state;
  try {
    state = openClientState(dataDir.clientDir);
  } catch (err) {
    dataDir.discard();
    throw err;
  }
  const agent = new Agent({
    config,
    overrides,
    dataDir,
    logger,
    state,
    node: fingerprint(config, dataDir.clientDir, dataDir.allocDir),
  });
  if (files.length > 0) logger.info({ files }, "loaded configuration");
  if (overrides.dev) logger.warn("dev mode: state lives in a temporary data dir that is removed at shutdown");

  const done = new Promise<number>((resolve) => {
    let signals = 0;
    const stop = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        logger.warn({ signal }, "second signal during shutdown: exiting now");
        resolve(1);
        return;
      }
      logger.info({ signal }, "signal received");
      agent.shutdown().then(
        () => resolve(0),
        (err: unknown) => {
          logger.error({ err }, "shutdown failed");
          resolve(1);
        },
      );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    process.on("SIGHUP", () => void agent.reload());
  });
  try {
    await agent.start();
  } catch (err) {
    await agent.shutdown();
    throw err;
  }
  return done;
}
