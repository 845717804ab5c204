/**
 * How fast jobs start and how fast a restarted agent takes its tasks back,
 * with the compiled binary and with drover on Deno, one after the other in
 * the same run:
 *
 *   job to running   POST /v1/jobs of a job with count 20 of `sleep` until the
 *                    server reports all 20 allocs running; p50 over 5 runs.
 *                    Anchor: Nomad 0.12 -dev, 618 ms on this kind of machine.
 *   agent restart    100 running tasks; SIGTERM the agent, start it again, time
 *                    until its API answers (the client reattaches to every task
 *                    before the API opens) and all 100 allocs read running;
 *                    beside the same start-up with no tasks, in the same run.
 *
 *   bun bench/job-to-running.ts [runs]      (DROVER_RUNTIMES=bun or deno for one)
 */
import { join } from "node:path";
import { executorsUnder, pidsWithCmdline, sleep } from "../test/helpers/index.ts";
import { droverRuntimes, type DroverRuntime } from "../test/helpers/runtimes.ts";
import { benchAgent, machineLine, median, percentile, printTable } from "./lib.ts";
import { sleepJobBody } from "../test/helpers/jobs.ts";

const RUNS = Number(process.argv[2] ?? 5);
const COUNT = 20;
const RESTART_TASKS = 100;

/** How long a purged job's executors may take to end before the run is called stuck. */
const STOP_TIMEOUT_MS = 30_000;

interface Figures {
  jobTimes: number[];
  /** Restart with no tasks, until the API answers. */
  empty: number;
  /** Restart with RESTART_TASKS tasks, until the API answers (all reattached). */
  withTasks: number;
  /** The same, until every alloc reads running. */
  total: number;
}

/** Every figure for drover on `runtime`: its own agent, data dir and cgroup parent, all removed after. */
async function measure(runtime: DroverRuntime): Promise<Figures> {
  const bench = await benchAgent("drover-bench-jobs-", { gc_max_allocs: 500 }, { runtime });
  const { dir, address } = bench;

  /**
   * Waits with Nomad's blocking queries (?index=), as `nomad job run`'s monitor
   * does: the answer comes when the allocs change, so the wait costs the agent
   * one request per change instead of a tight poll.
   */
  async function untilRunning(job: string, count: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let index = 0;
    for (;;) {
      const res = await fetch(`${address}/v1/job/${job}/allocations?index=${index}&wait=5s`);
      index = Number(res.headers.get("X-Nomad-Index") ?? 0);
      const statuses = ((await res.json()) as { ClientStatus: string; DesiredStatus: string }[])
        .filter((a) => a.DesiredStatus === "run")
        .map((a) => a.ClientStatus);
      if (statuses.length === count && statuses.every((s) => s === "running")) return;
      if (Date.now() > deadline) throw new Error(`${job}: ${statuses.filter((s) => s === "running").length}/${count} running after ${timeoutMs} ms`);
    }
  }

  async function stopAndPurge(id: string): Promise<void> {
    const res = await fetch(`${address}/v1/job/${id}?purge=true`, { method: "DELETE" });
    if (!res.ok) throw new Error(`purge ${id}: ${res.status} ${await res.text()}`);
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (executorsUnder(join(dir, "data", "run")).length > 0) {
      if (Date.now() > deadline) {
        const allocs = (await (await fetch(`${address}/v1/allocations`)).json()) as { ID: string; DesiredStatus: string; ClientStatus: string }[];
        throw new Error(`purge ${id}: executors still running after ${STOP_TIMEOUT_MS} ms; allocs: ${allocs.map((a) => `${a.ID.slice(0, 8)} ${a.DesiredStatus}/${a.ClientStatus}`).join(", ")}`);
      }
      await sleep(20);
    }
  }

  let agent = await bench.start();
  try {
    const jobTimes: number[] = [];
    for (let run = 0; run <= RUNS; run++) {
      const id = `count20-${run}`;
      const started = performance.now();
      const res = await fetch(`${address}/v1/jobs`, { method: "POST", body: sleepJobBody(id, COUNT), headers: { "Content-Type": "application/json" } });
      if (!res.ok) throw new Error(`register failed: ${res.status} ${await res.text()}`);
      await untilRunning(id, COUNT);
      // The first run warms the page cache; it is not counted.
      if (run > 0) jobTimes.push(performance.now() - started);
      await stopAndPurge(id);
    }

    // Agent restart: with no tasks first (the floor), then with 100.
    const restart = async (): Promise<number> => {
      agent.kill("SIGTERM");
      await agent.exited;
      const started = performance.now();
      agent = await bench.start();
      return performance.now() - started;
    };
    const empty = await restart();
    await fetch(`${address}/v1/jobs`, { method: "POST", body: sleepJobBody("hundred", RESTART_TASKS), headers: { "Content-Type": "application/json" } });
    await untilRunning("hundred", RESTART_TASKS, 120_000);
    const withTasks = await restart();
    const readsRunning = performance.now();
    await untilRunning("hundred", RESTART_TASKS);
    const total = withTasks + (performance.now() - readsRunning);
    await stopAndPurge("hundred");

    return { jobTimes, empty, withTasks, total };
  } finally {
    agent.kill("SIGKILL");
    await agent.exited;
    await bench.cleanUp();
  }
}

const rows: Record<string, Figures> = {};
for (const runtime of droverRuntimes()) rows[runtime.name === "bun" ? "drover on Bun (compiled)" : "drover on Deno"] = await measure(runtime);

printTable(
  `Job to running: POST /v1/jobs of count ${COUNT} x sleep until all allocs are running (${RUNS} runs)`,
  ["what", "p50 ms", "p90 ms", "min ms", "max ms"],
  [
    ...Object.entries(rows).map(([name, f]) => [name, median(f.jobTimes), percentile(f.jobTimes, 90), Math.min(...f.jobTimes), Math.max(...f.jobTimes)]),
    ["Nomad 0.12 -dev (quoted anchor)", 618, "", "", ""],
  ],
);
printTable(
  "Agent restart: SIGTERM, start again, until every task is reattached and its alloc reads running",
  ["agent", "no tasks (floor) ms", `${RESTART_TASKS} tasks: API up (all reattached) ms`, `${RESTART_TASKS} tasks: all allocs running ms`],
  Object.entries(rows).map(([name, f]) => [name, f.empty, f.withTasks, f.total]),
);
console.log(machineLine());
