/**
 * The UI's token handling in Chromium, against an API that answers as
 * Nomad's does with ACLs on (its documented shapes: /v1/acl/token/self, a
 * policy's RulesJSON, 403 "Permission denied"): the token entered on the
 * token page is kept and sent as X-Nomad-Token on every request; the page
 * lists what the token's policy allows; pages leave out or disable what it
 * does not (run a job, logs, exec, restart), saying why.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pino from "pino";
import type { Context, Hono } from "hono";
import type { Page } from "playwright-core";
import { createApp } from "../../src/api/app.ts";
import { uiRoutes } from "../../src/api/routes/ui.ts";
import { bundleUi } from "../../src/runtime/bun/ui-bundle.ts";
import { browserMissing, launchBrowser, type TestBrowser } from "../helpers/browser.ts";
import { tempDir, waitFor } from "../helpers/index.ts";

const SECRET = "3f2c1d8e-0000-4000-8000-0000000000aa";
const ALLOC = "7a1b2c3d-1111-4222-8333-444455556666";
const DENIED = "Permission denied";

/** Every token the fake API saw on a /v1 request ("" for none). */
const tokensSeen: string[] = [];

const alloc = {
  ID: ALLOC,
  Name: "web.g[0]",
  JobID: "web",
  TaskGroup: "g",
  NodeID: "node-1",
  NodeName: "vm",
  DesiredStatus: "run",
  ClientStatus: "running",
  TaskStates: { t: { State: "running", Restarts: 0, StartedAt: new Date().toISOString(), Events: [{ Type: "Started", Time: Date.now() * 1e6, DisplayMessage: "Task started by client" }] } },
  AllocatedResources: { Tasks: { t: { Cpu: { CpuShares: 100 }, Memory: { MemoryMB: 64 } } } },
};

/** Nomad with ACLs on, a read-only client token: namespace read, node read, no agent rule. */
function fakeNomad(app: Hono): void {
  app.use("/v1/*", async (c, next) => {
    const token = c.req.header("x-nomad-token") ?? "";
    tokensSeen.push(token);
    if (token !== SECRET) return c.text(DENIED, 403);
    await next();
  });
  app.get("/v1/agent/self", (c) => c.text(DENIED, 403));
  app.get("/v1/acl/token/self", (c) => c.json({ AccessorID: "acc-1", SecretID: SECRET, Name: "reader", Type: "client", Policies: ["readonly"], Global: false }));
  app.get("/v1/acl/policy/readonly", (c) =>
    c.json({
      Name: "readonly",
      Rules: 'namespace "default" { policy = "read" }\nnode { policy = "read" }',
      RulesJSON: { Namespaces: [{ Name: "default", Policy: "read", Capabilities: ["list-jobs", "parse-job", "read-job"] }], Node: { Policy: "read" } },
    }),
  );
  const indexed = (c: Context, body: unknown) => {
    c.header("X-Nomad-Index", "5");
    // A blocking query at the current index waits a little, as Nomad's would until its wait ends.
    return c.req.query("index") ? new Promise<Response>((resolve) => setTimeout(() => resolve(c.json(body)), 500)) : c.json(body);
  };
  app.get("/v1/jobs", (c) => indexed(c, [{ ID: "web", Name: "web", Type: "service", Priority: 50, Status: "running", JobSummary: { Summary: { g: { Running: 1 } } } }]));
  app.get(`/v1/allocation/${ALLOC}`, (c) => indexed(c, alloc));
  app.get(`/v1/client/allocation/${ALLOC}/stats`, (c) =>
    c.json({ ResourceUsage: { MemoryStats: { RSS: 4 << 20, Measured: ["RSS"] }, CpuStats: { TotalTicks: 12, Percent: 0.5 } }, Tasks: {}, Timestamp: Date.now() * 1e6 }),
  );
}

let server: ReturnType<typeof Bun.serve> | undefined;
let browser: TestBrowser;
let page: Page;
let base = "";

beforeAll(async () => {
  if (browserMissing) return;
  const files = await bundleUi();
  const app = createApp(pino({ level: "silent" }), [fakeNomad, uiRoutes(async () => files)]);
  server = Bun.serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${server.port}`;
  browser = await launchBrowser({ dir: tempDir("drover-ui-acl-") });
  page = await browser.newPage();
  page.setDefaultTimeout(15_000);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
});

describe.skipIf(browserMissing !== undefined)("the UI with ACLs on", () => {
  test("the token page takes the secret, keeps it, and lists what its policy allows", async () => {
    // No token yet: the agent refuses the anonymous token (a 403 Chromium reports on its console).
    await browser.allowing(/status of 403/, async () => {
      await page.goto(`${base}/ui/settings/tokens`);
      await page.locator('[data-access-mode="anonymous"]').waitFor();
    });
    await page.locator("#token-secret").fill(SECRET);
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-access-mode="client"]').waitFor();
    await page.getByText("reader").first().waitFor();
    const allowed = async (capability: string) => page.locator(`[data-capability="${capability}"]`).getAttribute("data-allowed");
    expect(await allowed("read-job")).toBe("true");
    expect(await allowed("node:read")).toBe("true");
    expect(await allowed("submit-job")).toBe("false");
    expect(await allowed("alloc-exec")).toBe("false");
    expect(await allowed("read-logs")).toBe("false");
    expect(await allowed("agent:read")).toBe("false");
    // Kept in the browser: a reload (a new page load) still sends it.
    await page.reload();
    await page.locator('[data-access-mode="client"]').waitFor();
  });

  test("pages leave out what the token may not do, saying why; every request carries the token", async () => {
    tokensSeen.length = 0;
    await page.goto(`${base}/ui/jobs`);
    await page.locator('tr[data-job="web"]').waitFor();
    const run = page.getByRole("button", { name: "Run a job" });
    expect(await run.isDisabled()).toBe(true);
    expect(await run.getAttribute("title")).toBe("Your token may not run and stop jobs");
    expect(await page.locator('tr[data-job="web"]').getByRole("button", { name: "Stop" }).isDisabled()).toBe(true);

    await page.goto(`${base}/ui/allocations/${ALLOC}`);
    await page.locator("#logs").getByText("Your token may not read task logs.").waitFor();
    await page.locator("#exec").getByText("Your token may not exec into tasks.").waitFor();
    expect(await page.getByRole("button", { name: "Restart" }).isDisabled()).toBe(true);
    await waitFor("a chart point", async () => Number(await page.locator("figure.chart").first().getAttribute("data-points")) >= 1);
    expect(tokensSeen.length).toBeGreaterThan(3);
    expect(new Set(tokensSeen)).toEqual(new Set([SECRET]));
  });

  test("no console errors but the expected refusals", () => {
    expect(browser.problems).toEqual([]);
  });
});
