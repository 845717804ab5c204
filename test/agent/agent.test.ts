import { describe, expect, test } from "bun:test";
import pino from "pino";
import * as v from "valibot";
import { Agent } from "../../src/agent/agent.ts";
import { AgentConfigSchema } from "../../src/config/schema.ts";
import { prepareDataDir } from "../../src/agent/data-dir.ts";
import { fingerprint } from "../../src/client/fingerprint/index.ts";
import { openClientState } from "../../src/state/client/db.ts";
import { DiskReserve } from "../../src/state/reserve.ts";
import { freePort, tempDir } from "../helpers/index.ts";

describe("agent lifecycle", () => {
  test("a shutdown while the agent is still starting leaves nothing serving", async () => {
    const port = await freePort();
    // Neither server nor client: the HTTP API and the host stats sampler are enough to show the order.
    const config = v.parse(AgentConfigSchema, { data_dir: tempDir(), ports: { http: port }, server: { enabled: false }, client: { enabled: false } });
    const dataDir = prepareDataDir(config, false);
    const agent = new Agent({
      config,
      overrides: { dev: false, configPaths: [] },
      dataDir,
      logger: pino({ level: "silent" }),
      state: openClientState(dataDir.clientDir),
      reserve: new DiskReserve(dataDir.root),
      node: fingerprint(config, dataDir.clientDir, dataDir.allocDir),
    });
    // A SIGINT right after start-up began: the signal handler calls shutdown() while start() is in flight.
    const starting = agent.start();
    await agent.shutdown();
    await starting.catch(() => undefined);
    const answer = await fetch(`http://127.0.0.1:${port}/v1/agent/health`).then(
      (res) => res.status,
      () => "refused",
    );
    expect(answer).toBe("refused");
  });
});
