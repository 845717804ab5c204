/**
 * Running the agent as a process: config, data dir, logger, state DB and
 * fingerprint put together, then the agent started and its signals handled
 * (SIGINT/SIGTERM: shut down, a second one: exit now; SIGHUP: reload).
 */
import { fingerprint } from "../client/fingerprint/index.ts";
import { loadAgentConfig, type ConfigOverrides } from "../config/load.ts";
import { createLogger } from "../lib/logger.ts";
import { openClientState } from "../state/client/db.ts";
import { DiskReserve } from "../state/reserve.ts";
import { Agent } from "./agent.ts";
import { prepareDataDir } from "./data-dir.ts";

/** Runs the agent until a signal stops it; resolves with the exit code. */
export async function runAgent(overrides: ConfigOverrides): Promise<number> {
  const { config, files } = await loadAgentConfig(overrides);
  const dataDir = prepareDataDir(config, overrides.dev);
  const logger = await createLogger({ level: config.log_level, json: config.log_json });
  // Made before anything else takes room on the disk: what stops work on a full disk spends it.
  const reserve = new DiskReserve(dataDir.root);
  if (!reserve.ensure()) logger.warn({ dir: dataDir.root, bytes: reserve.bytes }, "no room for the disk reserve; stops on a full disk may fail");
  let state;
  try {
    state = openClientState(dataDir.clientDir, reserve);
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
    reserve,
    node: fingerprint(config, dataDir.clientDir, dataDir.allocDir),
  });
  if (files.length > 0) logger.info({ files }, "loaded configuration");
  if (dataDir.temporary) logger.warn("dev mode: state lives in a temporary data dir that is removed at shutdown");
  else if (overrides.dev) logger.warn({ data_dir: dataDir.root }, "dev mode with a data dir of its own: tasks outlive the agent and are taken back at its next start");

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
