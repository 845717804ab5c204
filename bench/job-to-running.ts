/**
 * How fast jobs start and how fast a restarted agent takes its tasks back,
 * with the compiled binary:
 *
 *   job to running   POST /v1/jobs of a job with count 20 of `sleep` until the
 *                    server reports all 20 allocs running; p50 over 5 runs.
 *                    Anchor: Nomad 0.12 -dev, 618 ms on this kind of machine.
 *   agent restart    100 running tasks; SIGTERM the agent, start it again, time
 *                    until its API answers (the client reattaches to every task
 *                    before the API opens) and all 100 allocs read running;
 *                    beside the same start-up with no tasks, in the same run.
 *
 *   bun bench/job-to-running.ts [runs]
 */
import { join } from "node:path";
import { pidsWithCmdline, sleep } from "../test/helpers/index.ts";
import { benchAgent, machineLine, median, percentile, printTable } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 5);
const COUNT = 20;
const RESTART_TASKS = 100;

const bench = await benchAgent("drover-bench-jobs-", { gc_max_allocs: 500 });
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

function jobBody(id: string, count: number) {
  return JSON.stringify({
    Job: {
      ID: id,
      Type: "service",
      Datacenters: ["dc1"],
      TaskGroups: [
        {
          Name: "g",
          Count: count,
          Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["600"] }, Resources: { CPU: 20, MemoryMB: 16 } }],
        },
      ],
    },
  });
}

/** How long a purged job's executors may take to end before the run is called stuck. */
const STOP_TIMEOUT_MS = 30_000;

async function stopAndPurge(id: string): Promise<void> {
  const res = await fetch(`${address}/v1/job/${id}?purge=true`, { method: "DELETE" });
  if (!res.ok) throw new Error(`purge ${id}: ${res.status} ${await res.text()}`);
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (pidsWithCmdline(join(dir, "data", "run")).length > 0) {
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
    const res = await fetch(`${address}/v1/jobs`, { method: "POST", body: jobBody(id, COUNT), headers: { "Content-Type": "application/json" } });
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
  await fetch(`${address}/v1/jobs`, { method: "POST", body: jobBody("hundred", RESTART_TASKS), headers: { "Content-Type": "application/json" } });
  await untilRunning("hundred", RESTART_TASKS, 120_000);
  const withTasks = await restart();
  const readsRunning = performance.now();
  await untilRunning("hundred", RESTART_TASKS);
  const total = withTasks + (performance.now() - readsRunning);
  await stopAndPurge("hundred");

  printTable(
    `Job to running: POST /v1/jobs of count ${COUNT} x sleep until all allocs are running (${RUNS} runs)`,
    ["what", "p50 ms", "min ms", "max ms"],
    [
      ["drover (compiled, this machine)", median(jobTimes), Math.min(...jobTimes), Math.max(...jobTimes)],
      ["Nomad 0.12 -dev (quoted anchor)", 618, "", ""],
    ],
  );
  printTable(
    "Agent restart: SIGTERM, start again, until every task is reattached and its alloc reads running",
    ["agent", "ms"],
    [
      ["no tasks (floor, same run)", empty],
      [`${RESTART_TASKS} running tasks: API up (all reattached)`, withTasks],
      [`${RESTART_TASKS} running tasks: all allocs read running`, total],
    ],
  );
  console.log(`p90 of job to running: ${percentile(jobTimes, 90).toFixed(1)} ms`);
  console.log(machineLine());
} finally {
  agent.kill("SIGKILL");
  await agent.exited;
  await bench.cleanUp();
}
