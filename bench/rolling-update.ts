/**
 * A rolling update through a deployment, with the compiled binary: a
 * count-20 service with `update { max_parallel = 5 }` moved to a new
 * version. Measured from POST /v1/jobs of the new version until every alloc
 * told to run is of the new version and healthy, and, from every committed
 * change in between (the event stream, so no state between two reads is
 * missed), the fewest healthy allocs at any moment and how many moments had
 * fewer than count - max_parallel (15; the goal is none).
 *
 * A healthy alloc: told to run, running on the client, and its health
 * decided healthy (by min_healthy_time of running, health_check = "task_states").
 * The floor is what the update block allows at best: ceil(20 / 5) batches,
 * each at least min_healthy_time.
 *
 *   bun bench/rolling-update.ts [runs]
 */
import { benchAgent, machineLine, median, printTable } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 3);
const COUNT = 20;
const MAX_PARALLEL = 5;
/** Each new alloc must run this long before it counts as healthy; the floor is built from it. */
const MIN_HEALTHY_S = 2;
/** How long one rollout may take before the run is called stuck. */
const ROLLOUT_TIMEOUT_MS = 120_000;

interface AllocView {
  version: number;
  desired: string;
  client: string;
  healthy: boolean | null;
}

const bench = await benchAgent("drover-bench-rolling-", { gc_max_allocs: 500 });
const { address } = bench;

function jobBody(version: string) {
  return JSON.stringify({
    Job: {
      ID: "rolling",
      Type: "service",
      Datacenters: ["dc1"],
      Meta: { version },
      TaskGroups: [
        {
          Name: "web",
          Count: COUNT,
          Update: { MaxParallel: MAX_PARALLEL, HealthCheck: "task_states", MinHealthyTime: MIN_HEALTHY_S * 1e9, HealthyDeadline: 60e9, ProgressDeadline: 120e9 },
          Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["600"] }, Resources: { CPU: 20, MemoryMB: 16 } }],
        },
      ],
    },
  });
}

const healthyCount = (allocs: ReadonlyMap<string, AllocView>) =>
  [...allocs.values()].filter((alloc) => alloc.desired === "run" && alloc.client === "running" && alloc.healthy === true).length;

/**
 * Registers `version` and follows the event stream from the current index
 * until `expectedVersion` is everywhere and healthy.
 */
async function rollout(version: string, expectedVersion: number, allocs: Map<string, AllocView>): Promise<{ ms: number; fewest: number; below: number; moments: number }> {
  const index = Number((await fetch(`${address}/v1/job/rolling`)).headers.get("X-Nomad-Index") ?? 0);
  const abort = new AbortController();
  const stream = await fetch(`${address}/v1/event/stream?topic=Allocation:rolling&index=${index + 1}`, { signal: abort.signal });
  const started = performance.now();
  const res = await fetch(`${address}/v1/jobs`, { method: "POST", body: jobBody(version), headers: { "Content-Type": "application/json" } });
  if (!res.ok) throw new Error(`register failed: ${res.status} ${await res.text()}`);
  let fewest = healthyCount(allocs);
  let below = 0;
  let moments = 0;
  const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const deadline = Date.now() + ROLLOUT_TIMEOUT_MS;
  try {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`rollout to ${version} not done after ${ROLLOUT_TIMEOUT_MS} ms`);
      const { value, done } = await reader.read();
      if (done) throw new Error("event stream ended");
      buffered += value;
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const batch = JSON.parse(line) as { Events?: { Payload: { Allocation: { ID: string; DesiredStatus: string; ClientStatus: string; JobVersion?: number; DeploymentStatus: { Healthy: boolean | null } | null } } }[] };
        if (!batch.Events) continue;
        for (const { Payload } of batch.Events) {
          const alloc = Payload.Allocation as { ID: string; DesiredStatus: string; ClientStatus: string; DeploymentStatus: { Healthy: boolean | null } | null };
          const known = allocs.get(alloc.ID);
          allocs.set(alloc.ID, {
            version: known?.version ?? expectedVersion,
            desired: alloc.DesiredStatus,
            client: alloc.ClientStatus,
            healthy: alloc.DeploymentStatus?.Healthy ?? null,
          });
        }
        moments++;
        const healthy = healthyCount(allocs);
        fewest = Math.min(fewest, healthy);
        if (healthy < COUNT - MAX_PARALLEL) below++;
        const live = [...allocs.values()].filter((alloc) => alloc.desired === "run");
        if (live.length === COUNT && live.every((alloc) => alloc.version === expectedVersion && alloc.healthy === true && alloc.client === "running")) {
          return { ms: performance.now() - started, fewest, below, moments };
        }
      }
    }
  } finally {
    abort.abort();
  }
}

/** The allocs as they stand, each of the version it runs. */
async function snapshot(): Promise<Map<string, AllocView>> {
  const list = (await (await fetch(`${address}/v1/job/rolling/allocations`)).json()) as {
    ID: string;
    JobVersion: number;
    DesiredStatus: string;
    ClientStatus: string;
    DeploymentStatus: { Healthy: boolean | null } | null;
  }[];
  return new Map(list.map((alloc) => [alloc.ID, { version: alloc.JobVersion, desired: alloc.DesiredStatus, client: alloc.ClientStatus, healthy: alloc.DeploymentStatus?.Healthy ?? null }]));
}

const agent = await bench.start();
try {
  // Version 0: placed all at once, then healthy.
  await rollout("v0", 0, new Map());
  const results = [];
  for (let run = 1; run <= RUNS; run++) results.push(await rollout(`v${run}`, run, await snapshot()));
  const floorMs = Math.ceil(COUNT / MAX_PARALLEL) * MIN_HEALTHY_S * 1000;
  printTable(
    `Rolling update: count ${COUNT}, max_parallel ${MAX_PARALLEL}, min_healthy_time ${MIN_HEALTHY_S}s; submit until all new allocs healthy (${RUNS} runs)`,
    ["what", "p50 ms", "min ms", "max ms", "fewest healthy", `moments < ${COUNT - MAX_PARALLEL} healthy`, "changes seen"],
    [
      [
        "drover (compiled, this machine)",
        Math.round(median(results.map((r) => r.ms))),
        Math.round(Math.min(...results.map((r) => r.ms))),
        Math.round(Math.max(...results.map((r) => r.ms))),
        String(Math.min(...results.map((r) => r.fewest))),
        String(results.reduce((sum, r) => sum + r.below, 0)),
        String(results.reduce((sum, r) => sum + r.moments, 0)),
      ],
      [`floor: ${Math.ceil(COUNT / MAX_PARALLEL)} batches x min_healthy_time`, floorMs, "", "", String(COUNT - MAX_PARALLEL), "0", ""],
    ],
  );
  console.log(machineLine());
} finally {
  agent.kill("SIGTERM");
  await agent.exited;
  await bench.cleanUp();
}
