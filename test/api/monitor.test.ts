import { describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../../src/api/app.ts";
import { monitorRoutes } from "../../src/api/routes/monitor.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { tempDir, waitFor } from "../helpers/index.ts";

const logFile = join(tempDir("drover-monitor-"), "agent.log");
const fd = openSync(logFile, "a");
const logger = await createLogger({ level: "INFO", json: true, fd });
const app = createApp(logger, [monitorRoutes(logger)]);

/** Opens a monitor, logs with `log` until `wanted` appears in what it streams, and returns that. */
async function monitor(query: string, log: () => void, wanted: (text: string) => boolean): Promise<string> {
  const controller = new AbortController();
  const res = await app.request(`/v1/agent/monitor?${query}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = "";
  try {
    await waitFor("the monitored line", async () => {
      log();
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
      return wanted(text);
    });
  } finally {
    controller.abort();
    await reader.cancel();
  }
  return text;
}

const frameText = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => Buffer.from((JSON.parse(line) as { Data: string }).Data, "base64").toString())
    .join("");

describe("GET /v1/agent/monitor", () => {
  test("streams DEBUG lines in hclog's format while the agent's output stays at INFO", async () => {
    const child = logger.child({ component: "client" });
    const framed = await monitor("log_level=debug", () => child.debug({ alloc_id: "a1", task: "web" }, "task started"), (text) => frameText(text).includes("task started"));
    expect(frameText(framed)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[DEBUG\] client: task started: alloc_id=a1 task=web\n/m);
    expect(readFileSync(logFile, "utf8")).not.toContain("task started");
  });

  test("plain text and hclog's JSON; INFO by default leaves DEBUG out", async () => {
    const plain = await monitor("plain=true", () => {
      logger.debug("not shown");
      logger.warn({ disk: "full" }, "careful");
    }, (text) => text.includes("careful"));
    expect(plain).not.toContain("not shown");
    expect(plain).toMatch(/\[WARN\]  agent: careful: disk=full\n$/);
    const json = await monitor("log_json=true&plain=true", () => logger.info({ n: 1 }, "counted"), (text) => text.includes("counted"));
    expect(JSON.parse(json.trim().split("\n").at(-1)!)).toMatchObject({ "@level": "info", "@message": "counted", "@module": "agent", n: 1 });
  });

  test("an unknown level or option is a 400 with Nomad's message", async () => {
    const res = await app.request("/v1/agent/monitor?log_level=LOUD");
    expect([res.status, await res.text()]).toEqual([400, "Unknown log level: LOUD"]);
    expect((await app.request("/v1/agent/monitor?plain=maybe")).status).toBe(400);
  });
});
