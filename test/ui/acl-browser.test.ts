/**
 * The UI with ACLs on, in Chromium against the compiled agent (acl {
 * enabled = true }, bootstrapped, a read-only policy and a client token
 * holding it): the token entered on the token page is kept and sent; the
 * page lists what its policy allows; pages leave out or disable what it does
 * not (run a job, logs, exec, restart), saying why, while charts still draw;
 * a management token gets everything, its exec terminal included (the token
 * in the websocket's handshake frame, as Nomad's UI sends it); a token for
 * some namespaces is offered only those, each judged by its own rules.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { testAgent } from "../helpers/agent.ts";
import { browserMissing, launchBrowser, type TestBrowser } from "../helpers/browser.ts";
import { waitFor } from "../helpers/index.ts";

if (browserMissing) console.warn(`ui ACL browser tests skipped: ${browserMissing}`);

/** Generous: the machine is shared and Chromium starts cold; each wait ends as soon as its condition holds. */
const UI_WAIT_MS = 15_000;

const agent = await testAgent("drover-ui-acl-", { acl: { enabled: true } });

let browser: TestBrowser;
let page: Page;
let management = "";
let reader = "";
let allocId = "";
/** Tokens the browser sent to the agent's API ("" for none). */
const tokensSent: string[] = [];

async function api(method: string, path: string, token: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${agent.address}${path}`, { method, headers: { "X-Nomad-Token": token }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

beforeAll(async () => {
  if (browserMissing) return;
  await agent.start();
  management = ((await (await fetch(`${agent.address}/v1/acl/bootstrap`, { method: "PUT" })).json()) as { SecretID: string }).SecretID;
  await api("PUT", "/v1/acl/policy/readonly", management, { Name: "readonly", Rules: 'namespace "default" {\n  policy = "read"\n}\nnode {\n  policy = "read"\n}\n' });
  reader = ((await api("PUT", "/v1/acl/token", management, { Name: "reader", Type: "client", Policies: ["readonly"] })) as { SecretID: string }).SecretID;
  await api("PUT", "/v1/jobs", management, {
    Job: { ID: "web", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["600"] }, Resources: { CPU: 50, MemoryMB: 32 } }] }] },
  });
  allocId = await waitFor("web's alloc running", async () => {
    const allocs = (await api("GET", "/v1/job/web/allocations", management)) as { ID: string; ClientStatus: string }[];
    return allocs.find((alloc) => alloc.ClientStatus === "running")?.ID;
  });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  page.on("request", (request) => {
    if (new URL(request.url()).pathname.startsWith("/v1/")) tokensSent.push(request.headers()["x-nomad-token"] ?? "");
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/**
 * Until the token's policies are read an action is offered (the rows may come
 * first): a check of what is offered waits for the header's chip to name the token.
 */
const accessRead = () => page.locator(".token-chip").filter({ hasNotText: "token…" }).waitFor();

const allowed = (capability: string) => page.locator(`[data-capability="${capability}"]`).getAttribute("data-allowed");

describe.skipIf(browserMissing !== undefined)("the UI with ACLs on", () => {
  test("the token page takes the secret, keeps it, and lists what its policy allows", async () => {
    // No token yet: the agent refuses the anonymous caller (403s), and there is no anonymous
    // policy to read (404): Chromium reports each on its console.
    await browser.allowing(/status of (403|404)/, async () => {
      await page.goto(`${agent.address}/ui/settings/tokens`);
      await page.locator('[data-access-mode="anonymous"]').waitFor();
    });
    await page.locator("#token-secret").fill(reader);
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-access-mode="client"]').waitFor();
    await page.getByText("readonly").first().waitFor();
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

  test("pages leave out what the read-only token may not do, saying why; every request carries the token", async () => {
    tokensSent.length = 0;
    await page.goto(`${agent.address}/ui/jobs`);
    await page.locator('tr[data-job="web"]').waitFor();
    await accessRead();
    const run = page.getByRole("button", { name: "Run a job" });
    expect(await run.isDisabled()).toBe(true);
    expect(await run.getAttribute("title")).toBe("Your token may not run and stop jobs");
    expect(await page.locator('tr[data-job="web"]').getByRole("button", { name: "Stop" }).isDisabled()).toBe(true);

    await page.goto(`${agent.address}/ui/allocations/${allocId}`);
    await page.locator("#logs").getByText("Your token may not read task logs.").waitFor();
    await page.locator("#exec").getByText("Your token may not exec into tasks.").waitFor();
    expect(await page.getByRole("button", { name: "Restart" }).isDisabled()).toBe(true);
    await waitFor("a chart point", async () => Number(await page.locator("figure.chart").first().getAttribute("data-points")) >= 1, { timeoutMs: UI_WAIT_MS });
    expect(tokensSent.length).toBeGreaterThan(3);
    expect(new Set(tokensSent)).toEqual(new Set([reader]));
  });

  test("a management token may do everything: the exec terminal runs a command", async () => {
    await page.goto(`${agent.address}/ui/settings/tokens`);
    await page.locator("#token-secret").fill(management);
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-access-mode="management"]').waitFor();
    expect(await allowed("alloc-exec")).toBe("true");
    await page.goto(`${agent.address}/ui/allocations/${allocId}`);
    await accessRead();
    expect(await page.getByRole("button", { name: "Restart" }).isDisabled()).toBe(false);
    await page.getByRole("button", { name: "Open terminal" }).click();
    const terminal = page.locator(".exec-screen .xterm-rows");
    await terminal.waitFor();
    await page.locator(".exec-screen").click();
    await page.keyboard.type("echo acl-$((40+2))\n");
    await waitFor("the command's output", async () => ((await terminal.textContent()) ?? "").includes("acl-42"), { timeoutMs: UI_WAIT_MS });
    await page.keyboard.type("exit\n");
    await waitFor("the exit", async () => ((await terminal.textContent()) ?? "").includes("[exited with code 0]"), { timeoutMs: UI_WAIT_MS });
  });

  test("a token for some namespaces is offered those only, lands in one it may see, and may act as each allows", async () => {
    for (const name of ["team-a", "team-b", "ops"]) await api("PUT", `/v1/namespace/${name}`, management, { Name: name });
    await api("PUT", "/v1/acl/policy/teams", management, { Name: "teams", Rules: 'namespace "team-a" {\n  policy = "write"\n}\nnamespace "team-b" {\n  policy = "read"\n}\n' });
    const teams = ((await api("PUT", "/v1/acl/token", management, { Name: "teams", Type: "client", Policies: ["teams"] })) as { SecretID: string }).SecretID;
    for (const [id, namespace] of [["a-web", "team-a"], ["b-web", "team-b"], ["ops-web", "ops"]]) {
      await api("PUT", "/v1/jobs", management, { Job: { ID: id, Namespace: namespace, Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "redis" } }] }] } });
    }
    await page.goto(`${agent.address}/ui/settings/tokens`);
    await page.locator("#token-secret").fill(teams);
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator('[data-access-mode="client"]').waitFor();

    // The token may not see default: the list moves to the first namespace it may (default's list, asked first, is refused).
    await browser.allowing(/status of 403/, async () => {
      await page.goto(`${agent.address}/ui/jobs`);
      await page.waitForURL(/\/ui\/jobs\?namespace=team-a$/);
      await page.locator('tr[data-job="a-web"]').waitFor();
      await accessRead();
    });
    // The page of team-a is a new one: its select reads the namespaces again, an answer that may follow the jobs'.
    const select = page.locator(".namespace-select select");
    await select.waitFor();
    expect(await select.locator("option").allTextContents()).toEqual(["All namespaces", "team-a", "team-b"]);
    expect(await page.getByRole("button", { name: "Run a job" }).isDisabled()).toBe(false);
    expect(await page.locator('tr[data-job="a-web"]').getByRole("button", { name: "Stop" }).isDisabled()).toBe(false);

    await select.selectOption("team-b");
    await page.locator('tr[data-job="b-web"]').waitFor();
    expect(await page.getByRole("button", { name: "Run a job" }).isDisabled()).toBe(true);
    expect(await page.locator('tr[data-job="b-web"]').getByRole("button", { name: "Stop" }).isDisabled()).toBe(true);

    // All: the jobs of the namespaces it may read, each row's actions as its namespace allows.
    await select.selectOption("*");
    await page.locator('tr[data-job="a-web"]').waitFor();
    await page.locator('tr[data-job="b-web"]').waitFor();
    expect(await page.locator("tr[data-job]").count()).toBe(2);
    expect(await page.locator('tr[data-job="a-web"]').getByRole("button", { name: "Stop" }).isDisabled()).toBe(false);
    expect(await page.locator('tr[data-job="b-web"]').getByRole("button", { name: "Stop" }).isDisabled()).toBe(true);
  });

  test("no console errors but the expected refusals", () => {
    expect(browser.problems).toEqual([]);
  });
});
