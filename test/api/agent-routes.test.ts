import { describe, expect, test } from "bun:test";
import pino from "pino";
import * as v from "valibot";
import { AgentConfigSchema } from "../../src/config/schema.ts";
import { fingerprint } from "../../src/client/fingerprint/index.ts";
import { createApp } from "../../src/api/app.ts";
import { PUBLIC, ROUTE_RULES } from "../../src/api/acl/route-rules.ts";
import { ApiError } from "../../src/api/errors.ts";
import { agentRoutes } from "../../src/api/routes/agent.ts";
import { clientAllocRoutes } from "../../src/api/routes/client-allocs.ts";
import { clientStatsRoutes } from "../../src/api/routes/client-stats.ts";
import { metricsRoutes } from "../../src/api/routes/metrics.ts";
import type { Client } from "../../src/client/client.ts";
import { HostStatsCollector } from "../../src/stats/host.ts";
import { hostMetrics } from "../../src/metrics/host.ts";
import { Metrics } from "../../src/metrics/registry.ts";
import { VERSION } from "../../src/lib/version.ts";
import { tempDir } from "../helpers/index.ts";

const dataDir = tempDir();
const config = v.parse(AgentConfigSchema, { datacenter: "dc9" });
const node = fingerprint(config, `${dataDir}/client`, `${dataDir}/alloc`);
const collector = new HostStatsCollector(`${dataDir}/alloc`, 1000);
const metrics = new Metrics({ node_id: node.id });
hostMetrics(metrics)(collector.sample());
const logged: unknown[] = [];
const logger = pino({ level: "error" }, { write: (line: string) => logged.push(JSON.parse(line)) });
let healthy = true;

const app = createApp(logger, [
  agentRoutes({
    config: () => config,
    dataDir,
    node,
    startedAt: new Date(),
    health: () => ({ client: { ok: healthy, message: healthy ? "ok" : "stuck" } }),
    clientStats: () => ({}),
  }),
  clientStatsRoutes(() => collector.latest()),
  metricsRoutes(metrics),
  (a) => {
    a.get("/v1/test/boom", () => {
      throw new Error("secret internals at /etc/passwd");
    });
    a.get("/v1/test/bad-state", () => JSON.parse("{secret"));
    a.get("/v1/test/teapot", () => {
      throw new ApiError(418, "short and stout");
    });
  },
], { routeRules: [...ROUTE_RULES, ...["/v1/test/boom", "/v1/test/bad-state", "/v1/test/teapot"].map((path) => ({ methods: ["GET"], path, rule: PUBLIC }))] });
const get = (path: string) => app.request(path);

describe("agent API", () => {
  test("GET /v1/agent/self: config, version, node", async () => {
    const res = await get("/v1/agent/self");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { config: Record<string, unknown>; stats: { client: { node_id: string } } };
    expect(body.config.Datacenter).toBe("dc9");
    expect(body.config.Version).toMatchObject({ Version: VERSION });
    expect(body.stats.client.node_id).toBe(node.id);
  });

  test("GET /v1/client/stats: HostStats", async () => {
    const body = (await (await get("/v1/client/stats")).json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(
      ["AllocDirStats", "CPU", "CPUTicksConsumed", "DeviceStats", "DiskStats", "Memory", "Timestamp", "Uptime"].sort(),
    );
  });

  test("GET /v1/agent/health is 200 when all is well and 500 naming the part that is not", async () => {
    expect((await get("/v1/agent/health")).status).toBe(200);
    healthy = false;
    const res = await get("/v1/agent/health");
    healthy = true;
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ client: { ok: false, message: "stuck" } });
  });

  test("GET /v1/metrics in Nomad's JSON and in Prometheus text", async () => {
    const json = (await (await get("/v1/metrics")).json()) as { Gauges: { Name: string; Labels: Record<string, string> }[] };
    const total = json.Gauges.find((g) => g.Name === "nomad.client.host.memory.total");
    expect(total?.Labels.node_id).toBe(node.id);
    const prom = await get("/v1/metrics?format=prometheus");
    expect(prom.headers.get("content-type")).toContain("text/plain");
    expect(await prom.text()).toMatch(/^nomad_client_host_memory_total\{node_id="[^"]+"\} \d+$/m);
    expect((await get("/v1/metrics?format=xml")).status).toBe(400);
  });

  test("Prometheus text can be turned off (telemetry.prometheus_metrics)", async () => {
    const off = createApp(logger, [metricsRoutes(metrics, false)]);
    const res = await off.request("/v1/metrics?format=prometheus");
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("Prometheus metrics are turned off (telemetry.prometheus_metrics = false)");
    expect((await off.request("/v1/metrics")).status).toBe(200);
  });

  test("unknown paths are a 404 with a plain-text message, as Nomad's errors are", async () => {
    const res = await get("/v1/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("Content-Type")).toStartWith("text/plain");
    expect(await res.text()).toBe("no such endpoint: GET /v1/nope");
  });

  test("a failing route is a 500 without internals; the log has them", async () => {
    const res = await get("/v1/test/boom");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret");
    expect(text).not.toContain("at ");
    expect(JSON.stringify(logged)).toContain("secret internals");
  });

  test("a SyntaxError from the agent's own data is a 500 too, not a bad request", async () => {
    const res = await get("/v1/test/bad-state");
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("secret");
  });

  test("a malformed body to a client endpoint is a 400 naming the problem", async () => {
    const client = createApp(logger, clientAllocRoutes({} as Client));
    const res = await client.request("/v1/client/allocation/x/restart", { method: "POST", body: "{not json" });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/^malformed JSON body: /);
  });

  test("a body that is JSON but not an object is a 400 and restarts nothing", async () => {
    const restarted: string[] = [];
    const client = createApp(logger, clientAllocRoutes({ restartAlloc: async (id: string) => void restarted.push(id) } as unknown as Client));
    for (const body of ["[1,2]", "7", '"x"', "null"]) {
      const res = await client.request("/v1/client/allocation/x/restart", { method: "PUT", body });
      expect({ body, status: res.status, text: await res.text() }).toEqual({ body, status: 400, text: expect.stringMatching(/^request body must be a JSON object, not /) });
    }
    expect(restarted).toEqual([]);
  });

  test("signal: a null Task (Nomad's api package sends it) signals every task; an unknown signal is Nomad's \"invalid signal\"", async () => {
    const signalled: [string, string, string][] = [];
    const stub = {
      allocRunner: (id: string) => ({ id }),
      signalAlloc: async (id: string, task: string, signal: string) => void signalled.push([id, task, signal]),
    };
    const client = createApp(logger, clientAllocRoutes(stub as unknown as Client));
    const all = await client.request("/v1/client/allocation/a1/signal", { method: "PUT", body: JSON.stringify({ Signal: "SIGHUP", Task: null }) });
    expect(all.status).toBe(200);
    const one = await client.request("/v1/client/allocation/a1/signal", { method: "POST", body: JSON.stringify({ Signal: "SIGUSR1", Task: "web" }) });
    expect(one.status).toBe(200);
    expect(signalled).toEqual([
      ["a1", "", "SIGHUP"],
      ["a1", "web", "SIGUSR1"],
    ]);
    const bad = await client.request("/v1/client/allocation/a1/signal", { method: "PUT", body: JSON.stringify({ Signal: "SIGNOPE" }) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("invalid signal: SIGNOPE");
    expect(signalled).toHaveLength(2);
  });

  test("join and force-leave answer as a lone Nomad server does; without the server, Nomad's 501", async () => {
    const put = async (path: string) => {
      const res = await app.request(path, { method: "PUT" });
      return { status: res.status, text: await res.text() };
    };
    const joined = await put("/v1/agent/join?address=10.0.0.9:4648");
    expect(joined.status).toBe(200);
    expect(JSON.parse(joined.text)).toEqual({ num_joined: 0, error: expect.stringContaining("10.0.0.9:4648") });
    expect(await put("/v1/agent/join")).toEqual({ status: 400, text: "missing address to join" });
    expect(await put("/v1/agent/force-leave?node=gone.global")).toEqual({ status: 200, text: "" });
    expect(await put("/v1/agent/force-leave?node=gone.global&prune=true")).toEqual({ status: 200, text: "" });
    expect(await put("/v1/agent/force-leave")).toEqual({ status: 400, text: "missing node to force leave" });
    expect(await put("/v1/agent/force-leave?node=x&prune=maybe")).toEqual({ status: 400, text: "invalid prune value" });

    const clientOnly = v.parse(AgentConfigSchema, { server: { enabled: false }, client: { servers: ["10.0.0.1"] } });
    const lone = createApp(logger, [agentRoutes({ config: () => clientOnly, dataDir, node, startedAt: new Date(), health: () => ({}), clientStats: () => ({}) })]);
    const refused = await lone.request("/v1/agent/join?address=x", { method: "PUT" });
    expect([refused.status, await refused.text()]).toEqual([501, "Invalid method"]);
  });

  test("deliberate errors keep their status and message", async () => {
    const res = await get("/v1/test/teapot");
    expect(res.status).toBe(418);
    expect(await res.text()).toBe("short and stout");
  });
});
