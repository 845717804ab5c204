/**
 * The web UI in Debian's Chromium against the compiled agent:
 *
 *   first paint    time from navigation to the first meaningful paint of the
 *                  jobs page, the page of a job with ALLOCS allocations (its
 *                  allocation table filled in), and an alloc page (its tasks
 *                  and the first chart point): median of RUNS loads, with the
 *                  browser cache off (a first visit) and on (a return visit).
 *                  Floor, same run: the browser's first paint of a plain
 *                  JSON answer from the same agent (/v1/agent/health).
 *   agent CPU      the agent's CPU (utime + stime from /proc) over WINDOW_S
 *                  seconds with no page open, then with TABS tabs on alloc
 *                  pages whose charts update every second; and how many
 *                  samples each tab drew meanwhile.
 *
 *   bun bench/ui.ts [runs]
 */
import type { Page } from "playwright-core";
import { browserMissing, launchBrowser } from "../test/helpers/browser.ts";
import { benchAgent, cpuSeconds, machineLine, median, printTable } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 7);
/** Allocations of the job whose page is timed: the figure. */
const ALLOCS = 200;
/** Tabs watching live charts, and how long their cost is measured. */
const TABS = 5;
const WINDOW_S = 20;
/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ, 100 on Linux). */

if (browserMissing) {
  console.log(`bench/ui.ts skipped: ${browserMissing}`);
  process.exit(0);
}

const bench = await benchAgent("drover-bench-ui-");
const agentProcess = await bench.start();
const { address } = bench;

async function post(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${address}${path}`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
}

try {
  // A small task each: 200 of them must fit a 2-core VM's reservations (10 MHz, 10 MiB).
  const task = { Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["3600"] }, Resources: { CPU: 10, MemoryMB: 10 } };
  await post("/v1/jobs", { Job: { ID: "many", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Count: ALLOCS, Tasks: [task] }] } });
  for (let i = 0; i < 9; i++) await post("/v1/jobs", { Job: { ID: `other-${i}`, Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Count: 1, Tasks: [task] }] } });
  let allocs: { ID: string; ClientStatus: string }[] = [];
  for (;;) {
    allocs = (await (await fetch(`${address}/v1/job/many/allocations`)).json()) as typeof allocs;
    if (allocs.length === ALLOCS && allocs.every((alloc) => alloc.ClientStatus === "running")) break;
    await Bun.sleep(200);
  }
  const allocId = allocs[0]!.ID;

  const browser = await launchBrowser();
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  const cdp = await browser.context.newCDPSession(page);

  /** ms from navigation start until `ready` holds in the page (checked on every frame), and the first contentful paint. */
  async function paintTime(path: string, ready: string): Promise<{ meaningful: number; fcp: number }> {
    await page.goto("about:blank");
    await page.goto(`${address}${path}`, { waitUntil: "commit" });
    const meaningful = await page.evaluate(
      (check) =>
        new Promise<number>((resolve) => {
          const test = new Function(`return (${check})`) as () => boolean;
          const tick = () => (test() ? resolve(performance.now()) : requestAnimationFrame(tick));
          tick();
        }),
      ready,
    );
    const fcp = await page.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? Number.NaN);
    return { meaningful, fcp };
  }

  const pages: [string, string, string][] = [
    ["floor: a plain JSON answer (/v1/agent/health)", "/v1/agent/health", "document.body && document.body.textContent.includes('client')"],
    ["jobs page (10 jobs)", "/ui/jobs", "document.querySelectorAll('tr[data-job]').length === 10"],
    [`job page, ${ALLOCS} allocations`, "/ui/jobs/many", `document.querySelectorAll('tr[data-alloc]').length === ${ALLOCS}`],
    ["alloc page (tasks and a first chart point)", `/ui/allocations/${allocId}`, "document.querySelector('tr[data-task]') !== null && Number(document.querySelector('figure.chart')?.dataset.points) >= 1"],
  ];
  const rows: (string | number)[][] = [];
  for (const [name, path, ready] of pages) {
    const results: Record<string, { meaningful: number[]; fcp: number[] }> = { cold: { meaningful: [], fcp: [] }, warm: { meaningful: [], fcp: [] } };
    for (const mode of ["cold", "warm"] as const) {
      await cdp.send("Network.setCacheDisabled", { cacheDisabled: mode === "cold" });
      // One load first so a warm run has the files cached and no run pays Chromium's own first-use costs.
      await paintTime(path, ready);
      for (let run = 0; run < RUNS; run++) {
        const time = await paintTime(path, ready);
        results[mode]!.meaningful.push(time.meaningful);
        results[mode]!.fcp.push(time.fcp);
      }
    }
    rows.push([name, median(results.cold!.fcp), median(results.cold!.meaningful), median(results.warm!.fcp), median(results.warm!.meaningful)]);
  }
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: false });
  printTable(
    `Web UI first paint (ms from navigation, median of ${RUNS}; cold: browser cache off)`,
    ["page", "cold first paint", "cold meaningful", "warm first paint", "warm meaningful"],
    rows,
  );

  // The agent's CPU at rest, then with TABS tabs on alloc pages.
  await page.goto("about:blank");
  await Bun.sleep(2_000);
  let before = cpuSeconds(agentProcess.pid);
  await Bun.sleep(WINDOW_S * 1000);
  const idle = cpuSeconds(agentProcess.pid) - before;

  const tabs: Page[] = [page];
  while (tabs.length < TABS) tabs.push(await browser.context.newPage());
  for (const [i, tab] of tabs.entries()) await tab.goto(`${address}/ui/allocations/${allocs[i]!.ID}`);
  const points = () => Promise.all(tabs.map((tab) => tab.evaluate(() => Number(document.querySelector("figure.chart")?.getAttribute("data-points") ?? 0))));
  const visible = await Promise.all(tabs.map((tab) => tab.evaluate(() => document.visibilityState)));
  await Bun.sleep(3_000);
  const pointsBefore = await points();
  before = cpuSeconds(agentProcess.pid);
  await Bun.sleep(WINDOW_S * 1000);
  const watched = cpuSeconds(agentProcess.pid) - before;
  const pointsAfter = await points();
  const drawn = pointsAfter.map((n, i) => n - pointsBefore[i]!);
  printTable(
    `Agent CPU over ${WINDOW_S} s, ${ALLOCS + 9} tasks running (tabs: ${visible.join(", ")})`,
    ["what", "agent CPU %", "chart samples drawn per tab"],
    [
      ["no page open", (idle / WINDOW_S) * 100, "—"],
      [`${TABS} tabs on alloc pages, charts live`, (watched / WINDOW_S) * 100, drawn.join(", ")],
    ],
  );
  // The floor's page is Chromium's own view of JSON (its favicon request is a 404): only the UI's pages count.
  const problems = browser.problems.filter((problem) => new URL(problem.page).pathname.startsWith("/ui/"));
  console.log(`console errors on the UI's pages: ${problems.length === 0 ? "none" : JSON.stringify(problems)}`);
  console.log(machineLine());
  await browser.close();
} finally {
  agentProcess.kill("SIGTERM");
  await agentProcess.exited;
  await bench.cleanUp();
}
