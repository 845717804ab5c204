/**
 * The web UI in a real browser (Debian's Chromium through playwright-core)
 * against the compiled agent with real jobs: each page loads and shows the
 * agent's data; a job is run from the UI (a broken file first, its problem
 * shown in place); a job's deployment; logs follow; charts draw from real stats; the exec
 * terminal runs a command; links, the back button and reloads work; dark
 * mode, a phone's width, the keyboard, and no layout shift on the alloc
 * page. Any console error fails the file. Screenshots go to the test's temp
 * dir (kept when DROVER_UI_SCREENSHOTS names a directory to write them to).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { testAgent } from "../helpers/agent.ts";
import { browserMissing, launchBrowser, type TestBrowser } from "../helpers/browser.ts";
import { tempDir, waitFor } from "../helpers/index.ts";

if (browserMissing) console.warn(`ui browser tests skipped: ${browserMissing}`);

/** Generous: the machine is shared and Chromium starts cold; each wait ends as soon as its condition holds. */
const UI_WAIT_MS = 15_000;

const agent = await testAgent("drover-ui-");
const shots = process.env.DROVER_UI_SCREENSHOTS || join(tempDir("drover-ui-shots-"), "screenshots");
mkdirSync(shots, { recursive: true });

const chattyJob = {
  Job: {
    ID: "chatty",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "web",
        Count: 2,
        Tasks: [
          {
            Name: "server",
            Driver: "raw_exec",
            Config: { command: "/bin/sh", args: ["-c", 'i=0; while true; do i=$((i+1)); echo "line $i"; echo "warn $i" >&2; sleep 0.2; done'] },
            Resources: { CPU: 100, MemoryMB: 64 },
          },
        ],
      },
    ],
  },
};

/** A job no node can run (no java driver in drover): its page shows the placement failure. */
const unplaceableJob = {
  Job: { ID: "needs-java", Datacenters: ["dc1"], TaskGroups: [{ Name: "app", Count: 1, Tasks: [{ Name: "c", Driver: "java", Config: { jar_path: "app.jar" } }] }] },
};

let browser: TestBrowser;
let page: Page;
let allocId = "";
let nodeId = "";

async function post(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${agent.address}${path}`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

const url = (path: string) => `${agent.address}${path}`;

beforeAll(async () => {
  if (browserMissing) return;
  await agent.start();
  await post("/v1/jobs", chattyJob);
  await post("/v1/jobs", unplaceableJob);
  const allocs = await waitFor("chatty's allocs running", async () => {
    const list = await agent.get<{ ID: string; NodeID: string; ClientStatus: string }[]>("/v1/job/chatty/allocations");
    return list.length === 2 && list.every((alloc) => alloc.ClientStatus === "running") ? list : null;
  });
  allocId = allocs[0]!.ID;
  nodeId = allocs[0]!.NodeID;
  browser = await launchBrowser();
  page = await browser.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  console.log(`ui screenshots: ${shots}`);
});

describe.skipIf(browserMissing !== undefined)("the web UI in Chromium", () => {
  test("/ leads to the jobs page, which lists the jobs with their counts", async () => {
    await page.goto(url("/"));
    await page.waitForURL(/\/ui\/(jobs)?$/);
    const row = page.locator('tr[data-job="chatty"]');
    await row.getByText("running", { exact: true }).first().waitFor();
    await row.getByText("2 running").waitFor();
    await page.locator('tr[data-job="needs-java"]').getByText("1 queued").waitFor();
    await expect(page.title()).resolves.toBe("Jobs · drover");
    await shot("jobs");
  });

  test("a job file with a mistake shows the problem in place; a good one runs and opens its page", async () => {
    await page.goto(url("/ui/jobs"));
    await page.getByRole("button", { name: "Run a job" }).click();
    const editor = page.locator("#job-source");
    await editor.fill('job "from-ui" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/sleep"\n        args = ["600"]\n      }\n      resources {\n        memory = \n      }\n    }\n  }\n}\n');
    // The parse endpoint answers the broken file with a 400: Chromium reports the failed request on the console.
    await browser.allowing(/status of 400/, async () => {
      await page.getByRole("button", { name: "Run job" }).click();
      const problem = page.locator("#job-problems li").first();
      await problem.waitFor();
      expect(await problem.textContent()).toMatch(/^JobHCL:10,\d+: /);
      // The problem names its line: pressing it puts the cursor there.
      await problem.getByRole("button").click();
      const line = await editor.evaluate((element: HTMLTextAreaElement) => element.value.slice(0, element.selectionStart).split("\n").length);
      expect(line).toBe(10);
    });
    await shot("job-submit-error");
    await editor.fill('job "from-ui" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/sleep"\n        args = ["600"]\n      }\n    }\n  }\n}\n');
    await page.getByRole("button", { name: "Run job" }).click();
    await page.waitForURL(/\/ui\/jobs\/from-ui$/);
    await page.locator("#allocations tr[data-alloc]").getByText("running").waitFor();
    expect((await agent.get<{ Status: string }>("/v1/job/from-ui")).Status).toBe("running");
    await shot("job-from-ui");
  });

  test("a job's page: groups, versions, allocations; an unplaceable job's placement failure", async () => {
    await page.goto(url("/ui/jobs/chatty"));
    await page.locator("#allocations tr[data-alloc]").nth(1).waitFor();
    await page.locator("#versions").getByText("Version 0").waitFor();
    // A service job's first version rolls out as a deployment (Nomad's default update block).
    await page.locator('#deployment tr[data-deployment-group="web"]').waitFor();
    await shot("job");
    await page.goto(url("/ui/jobs/needs-java"));
    await page.locator("#placement-failures").getByText(/missing driver|java/).first().waitFor();
    await shot("job-placement-failure");
  });

  test("an allocation's page: live charts with real points, tasks, events, logs that follow", async () => {
    await page.goto(url(`/ui/allocations/${allocId}`));
    // Layout shifts from here on (Chromium's own measure): the page must not jump as data arrives.
    await page.evaluate(() => {
      (window as unknown as { shift: number }).shift = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean })[]) {
          if (!entry.hadRecentInput) (window as unknown as { shift: number }).shift += entry.value;
        }
      }).observe({ type: "layout-shift", buffered: true });
    });
    await page.locator('tr[data-task="server"]').getByText("running").waitFor();
    await page.locator("#events").getByText("Started", { exact: true }).waitFor();
    const chart = page.locator("figure.chart").first();
    await waitFor("three real points on the CPU chart", async () => Number(await chart.getAttribute("data-points")) >= 3, { timeoutMs: UI_WAIT_MS });
    // The memory chart's latest use is a real figure of the task's cgroup, drawn on a canvas.
    const memory = page.locator("figure.chart").nth(1);
    expect(await memory.locator(".legend-item").first().textContent()).toMatch(/used \d+(\.\d)? (KiB|MiB)/);
    expect(await memory.locator(".legend-item").nth(1).textContent()).toBe("reserved 64.0 MiB");
    expect(await memory.locator("canvas").count()).toBe(1);

    const logs = page.locator("pre.log-output");
    // The log view streams while it is on screen: scroll to it, as a reader would.
    await logs.scrollIntoViewIfNeeded();
    await waitFor("log lines", async () => /line \d+/.test((await logs.textContent()) ?? ""), { timeoutMs: UI_WAIT_MS });
    const lastLine = async () => Math.max(...[...((await logs.textContent()) ?? "").matchAll(/line (\d+)/g)].map((m) => Number(m[1])));
    const before = await lastLine();
    // Following: lines the task writes now appear without a reload.
    await waitFor("newer log lines", async () => (await lastLine()) > before + 2, { timeoutMs: UI_WAIT_MS });
    await page.getByRole("button", { name: "stderr" }).click();
    await waitFor("stderr lines", async () => /warn \d+/.test((await logs.textContent()) ?? ""), { timeoutMs: UI_WAIT_MS });
    expect(await page.evaluate(() => (window as unknown as { shift: number }).shift)).toBeLessThan(0.05);
    await shot("allocation");
  });

  test("a hidden tab stops polling and streaming; it picks up again when shown; a log view off screen holds no stream", async () => {
    await page.goto(url(`/ui/allocations/${allocId}`));
    const logs = page.locator("pre.log-output");
    await logs.scrollIntoViewIfNeeded();
    await waitFor("log lines", async () => /line \d+/.test((await logs.textContent()) ?? ""), { timeoutMs: UI_WAIT_MS });
    const requests: string[] = [];
    const ended: string[] = [];
    page.on("request", (request) => requests.push(new URL(request.url()).pathname));
    page.on("requestfailed", (request) => ended.push(new URL(request.url()).pathname));
    page.on("requestfinished", (request) => ended.push(new URL(request.url()).pathname));
    // Scrolled away from the logs: their stream ends.
    await page.evaluate(() => window.scrollTo(0, 0));
    await waitFor("the log stream closed", () => ended.some((path) => path.startsWith("/v1/client/fs/logs/")), { timeoutMs: UI_WAIT_MS });
    // The tab hidden (as the browser marks a background tab): no more stats requests.
    await page.evaluate(() => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    const stats = () => requests.filter((path) => path.endsWith("/stats")).length;
    const statsEnded = () => ended.filter((path) => path.endsWith("/stats")).length;
    // The poll under way as the tab was hidden ends (its pause included); then none starts for three intervals.
    let last = stats();
    let lastSeen = Date.now();
    await waitFor("the last stats poll over", () => {
      if (stats() !== last) [last, lastSeen] = [stats(), Date.now()];
      return statsEnded() === stats() && Date.now() - lastSeen > 1_500;
    }, { timeoutMs: UI_WAIT_MS });
    const settled = stats();
    await page.waitForTimeout(3_000);
    expect(stats()).toBe(settled);
    await page.evaluate(() => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "visible" });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await waitFor("stats polling again", () => stats() > settled, { timeoutMs: UI_WAIT_MS });
    page.removeAllListeners("request");
    page.removeAllListeners("requestfailed");
    page.removeAllListeners("requestfinished");
  });

  test("the exec terminal runs a command in the task and shows how it ended", async () => {
    await page.goto(url(`/ui/allocations/${allocId}`));
    await page.getByRole("button", { name: "Open terminal" }).click();
    const terminal = page.locator(".exec-screen .xterm-rows");
    await terminal.waitFor();
    await page.locator(".exec-screen").click();
    await page.keyboard.type("echo ui-exec-$((6*7)) $NOMAD_ALLOC_ID\n");
    await waitFor("the command's output", async () => ((await terminal.textContent()) ?? "").includes(`ui-exec-42 ${allocId}`), { timeoutMs: UI_WAIT_MS });
    await page.keyboard.type("exit 3\n");
    await waitFor("the exit code", async () => ((await terminal.textContent()) ?? "").includes("[exited with code 3]"), { timeoutMs: UI_WAIT_MS });
    await shot("exec");
  });

  test("restart from the page: the task's events show it", async () => {
    await page.goto(url(`/ui/allocations/${allocId}`));
    await page.getByRole("button", { name: "Restart" }).click();
    await page.locator("#events").getByText("Restart Signaled").first().waitFor();
  });

  test("the client's page: resources, drivers and their health, host charts; the agent's: health, the log pump, version", async () => {
    await page.goto(url(`/ui/clients/${nodeId}`));
    await page.locator('tr[data-driver="raw_exec"]').locator(".badge").getByText("healthy").waitFor();
    const host = page.locator('[data-chart-owner="Host"] figure.chart').first();
    await waitFor("host chart points", async () => Number(await host.getAttribute("data-points")) >= 2, { timeoutMs: UI_WAIT_MS });
    await page.locator("#allocations tr[data-alloc]").first().waitFor();
    await shot("client");
    await page.goto(url("/ui/agent"));
    await page.locator('tr[data-part="client"]').locator(".badge").getByText("healthy").waitFor();
    await page.locator("#logmon").getByText("running").waitFor();
    await page.getByText(/^\d+\.\d+\.\d+/).first().waitFor();
    await shot("agent");
    await page.goto(url("/ui/settings/tokens"));
    await page.locator('[data-access-mode="acl-disabled"]').waitFor();
    await shot("token");
  });

  test("links, the back button and a reload keep the page", async () => {
    await page.goto(url("/ui/jobs"));
    await page.locator('tr[data-job="chatty"] a').click();
    await page.waitForURL(/\/ui\/jobs\/chatty$/);
    await page.locator("#allocations tr[data-alloc] a").first().click();
    await page.waitForURL(/\/ui\/allocations\//);
    await page.locator('tr[data-task="server"]').waitFor();
    await page.goBack();
    await page.waitForURL(/\/ui\/jobs\/chatty$/);
    await page.locator("#allocations tr[data-alloc]").first().waitFor();
    await page.reload();
    await page.locator("#allocations tr[data-alloc]").first().waitFor();
    await page.goto(url("/ui/no/such/page"));
    await page.getByRole("heading", { name: "No such page" }).waitFor();
  });

  test("dark mode follows the system; a phone's width scrolls nothing sideways; the keyboard reaches the content", async () => {
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(url(`/ui/allocations/${allocId}`));
    await page.locator('tr[data-task="server"]').waitFor();
    const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(background).toBe("rgb(15, 19, 26)");
    await waitFor("dark chart points", async () => Number(await page.locator("figure.chart").first().getAttribute("data-points")) >= 2, { timeoutMs: UI_WAIT_MS });
    await shot("allocation-dark");
    await page.emulateMedia({ colorScheme: "light" });

    await page.setViewportSize({ width: 390, height: 844 });
    // Each page judged with its data in (a heading and a panel come before it: the jobs list's rows, the client's allocs and a chart's figures after).
    const drawn = 'figure.chart:not([data-points="0"])';
    const pages: [string, string[]][] = [
      ["/ui/jobs", ['tr[data-job="chatty"]']],
      [`/ui/allocations/${allocId}`, ['tr[data-task="server"]', drawn]],
      [`/ui/clients/${nodeId}`, ["#allocations tr[data-alloc]", drawn]],
    ];
    for (const [path, loaded] of pages) {
      await page.goto(url(path));
      await page.locator("main h1").waitFor();
      await page.locator(".panel").first().waitFor();
      for (const selector of loaded) await page.locator(selector).first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
    }
    await shot("phone-client");
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.goto(url("/ui/jobs"));
    await page.locator('tr[data-job="chatty"]').waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    // Tab onward: the first control of the page is the Run a job button, and Enter opens the form.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Run a job");
    await page.keyboard.press("Enter");
    await page.locator("#job-source").waitFor();
  });

  test("filter the jobs from the keyboard; stop one from the jobs page, confirmed by a second press", async () => {
    await page.goto(url("/ui/jobs"));
    await page.locator('tr[data-job="chatty"]').waitFor();
    await page.keyboard.press("/");
    await page.keyboard.type("from");
    await waitFor("only from-ui listed", async () => (await page.locator("tr[data-job]").count()) === 1, { timeoutMs: UI_WAIT_MS });
    const row = page.locator('tr[data-job="from-ui"]');
    await row.getByRole("button", { name: "Stop" }).click();
    await row.getByRole("button", { name: "Confirm stop" }).click();
    await waitFor("from-ui stopped", async () => (await agent.get<{ Stop: boolean }>("/v1/job/from-ui")).Stop);
    await row.getByText("dead").waitFor();
  });

  test("namespaces: the jobs list switches namespace, kept in the URL; All shows every one; a job's and an alloc's pages are in theirs", async () => {
    for (const name of ["team-a", "team-b"]) {
      const res = await fetch(url(`/v1/namespace/${name}`), { method: "PUT", body: JSON.stringify({ Name: name }) });
      expect(res.status).toBe(200);
    }
    await post("/v1/jobs", { Job: { ID: "in-a", Namespace: "team-a", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["600"] }, Resources: { CPU: 50, MemoryMB: 32 } }] }] } });
    await post("/v1/jobs?namespace=team-b", { Job: { ...unplaceableJob.Job, ID: "in-b" } });
    const requests: string[] = [];
    page.on("request", (request) => requests.push(request.url()));
    const listed = async () => (await page.locator("tr[data-job]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-job")))).sort();
    const select = page.locator(".namespace-select select");

    await page.goto(url("/ui/jobs"));
    await page.locator('tr[data-job="chatty"]').waitFor();
    expect(await listed()).not.toContain("in-a");
    // The select comes with its own answer (/v1/namespaces), which may follow the jobs'.
    await select.waitFor();
    expect(await select.locator("option").allTextContents()).toEqual(["All namespaces", "default", "team-a", "team-b"]);
    await select.selectOption("team-a");
    await page.waitForURL(/\/ui\/jobs\?namespace=team-a$/);
    await waitFor("team-a's job only", async () => JSON.stringify(await listed()) === '["in-a"]', { timeoutMs: UI_WAIT_MS });
    await select.selectOption("team-b");
    await page.waitForURL(/\/ui\/jobs\?namespace=team-b$/);
    await waitFor("team-b's job only", async () => JSON.stringify(await listed()) === '["in-b"]', { timeoutMs: UI_WAIT_MS });
    await select.selectOption("*");
    await page.waitForURL(/\/ui\/jobs\?namespace=\*$/);
    await waitFor("every namespace's jobs", async () => {
      const ids = await listed();
      return ["chatty", "in-a", "in-b"].every((id) => ids.includes(id));
    }, { timeoutMs: UI_WAIT_MS });
    expect(await page.locator('tr[data-job="in-b"]').getAttribute("data-namespace")).toBe("team-b");
    await shot("jobs-all-namespaces");
    // Dark mode reaches the select, as every control.
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await select.evaluate((element) => [getComputedStyle(element).backgroundColor, getComputedStyle(element).color])).toEqual(["rgb(23, 28, 37)", "rgb(228, 232, 239)"]);
    await shot("jobs-all-namespaces-dark");
    await page.emulateMedia({ colorScheme: "light" });

    // Back and reload keep the namespace, the select showing it.
    await page.goBack();
    await page.waitForURL(/namespace=team-b$/);
    await waitFor("team-b's job again", async () => JSON.stringify(await listed()) === '["in-b"]', { timeoutMs: UI_WAIT_MS });
    await page.reload();
    await waitFor("team-b's job after a reload", async () => JSON.stringify(await listed()) === '["in-b"]', { timeoutMs: UI_WAIT_MS });
    expect(await select.inputValue()).toBe("team-b");
    // The main navigation's Jobs link keeps the namespace too.
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" }).getAttribute("href")).toBe("/ui/jobs?namespace=team-b");

    // The select is a control of the keyboard's path, just before the filter.
    await page.keyboard.press("/");
    await page.keyboard.press("Shift+Tab");
    expect(await page.evaluate(() => document.activeElement?.closest(".namespace-select") !== null)).toBe(true);

    // A link without the namespace (an old bookmark) finds the job in its own: IDs are unique across namespaces.
    await browser.allowing(/status of 404/, async () => {
      await page.goto(url("/ui/jobs/in-b"));
      await page.waitForURL(/\/ui\/jobs\/in-b@team-b$/);
      await page.locator("#versions").getByText("Version 0").waitFor();
    });

    // A job's page is in its namespace (Nomad's job@namespace), and so is its alloc's.
    await page.goto(url("/ui/jobs?namespace=team-a"));
    await page.locator('tr[data-job="in-a"] a').click();
    await page.waitForURL(/\/ui\/jobs\/in-a@team-a$/);
    await page.locator("#allocations tr[data-alloc]").getByText("running").waitFor();
    await page.locator("#allocations tr[data-alloc] a").first().click();
    await page.waitForURL(/\/ui\/allocations\//);
    await page.locator('tr[data-task="t"]').waitFor();
    await page.locator(".kv").getByText("team-a", { exact: true }).waitFor();
    expect(await page.locator(".kv").getByRole("link", { name: "in-a" }).getAttribute("href")).toBe("/ui/jobs/in-a@team-a");
    const api = requests.map((address) => new URL(address)).filter((address) => /^\/v1\/(jobs?|client\/allocation|allocation)\b/.test(address.pathname) && !address.pathname.startsWith("/v1/jobs/parse"));
    expect(api.length).toBeGreaterThan(5);
    expect(api.filter((address) => !address.searchParams.has("namespace")).map((address) => address.pathname).filter((path) => !/^\/v1\/allocation\/[^/]+$/.test(path))).toEqual([]);
    expect(api.filter((address) => address.pathname.startsWith("/v1/job/in-a")).every((address) => address.searchParams.get("namespace") === "team-a")).toBe(true);
    await shot("allocation-team-a");
    page.removeAllListeners("request");
  });

  test("no console errors on any page", () => {
    expect(browser.problems).toEqual([]);
  });
});
