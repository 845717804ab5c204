/**
 * drover client nodes beside Nomad's own, in one cluster and one run: a real
 * Nomad 0.12 server, two drover agents (compiled) and two Nomad 0.12 client
 * agents, all on 127.0.0.1.
 *
 *   job to running   `nomad job run -detach` of a count-20 raw_exec `sleep` job,
 *                    constrained to one kind of node, until the server reports
 *                    all 20 allocs running (blocking queries, as the CLI's
 *                    monitor waits); drover and Nomad alternate, median of RUNS
 *                    (the first round warms caches and is not counted).
 *                    Goal: drover at most half Nomad's time.
 *   agent memory     PSS (/proc/PID/smaps_rollup) of each client agent, with
 *                    its 10 tasks running.
 *   helper memory    PSS of every process each agent keeps beside its tasks
 *                    (drover: the shared executors and logmon;
 *                    Nomad: an executor and a logmon per task), per task.
 *
 *   bun bench/cluster.ts [runs]
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detachMountsUnder } from "../src/runtime/mounts.ts";
import type { ChildProcess } from "../src/runtime/spawn.ts";
import { killPids, parentPid, pidsWithCmdline, sleep } from "../test/helpers/index.ts";
import { nomadClientIn, nomadServerIn, type NomadAgent } from "../test/helpers/nomad-agents.ts";
import { sleepJobHcl } from "../test/helpers/jobs.ts";
import { NOMAD_BINARY, nomad, nomadMissing } from "../test/helpers/nomad.ts";
import { benchAgent, machineLine, median, memoryOf, printTable, type BenchAgent } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 3);
const COUNT = 20;
const NODES_PER_KIND = 2;
/** Time for agents and helpers to settle (launch work done, heaps idle) before memory is read. */
const SETTLE_MS = 5_000;
const MIB = 1024 * 1024;

if (!NOMAD_BINARY) {
  console.log(`bench/cluster.ts: skipped: ${nomadMissing}`);
  process.exit(0);
}

type Kind = "drover" | "nomad";
const dir = mkdtempSync(join(tmpdir(), "drover-bench-cluster-"));
const drovers: ChildProcess[] = [];
const droverAgents: BenchAgent[] = [];
const nomadClients: NomadAgent[] = [];
let server: NomadAgent | undefined;

/** `pid`'s PSS, or its own part of it (`anon`) in bytes; 0 for a process gone meanwhile. */
function pss(pid: number, field: "pss" | "anon" = "pss"): number {
  try {
    return memoryOf(pid)[field];
  } catch {
    return 0;
  }
}

/** Direct children of `pid`: the helpers an agent started (the tasks are their children). */
const children = (pid: number) => readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((child) => parentPid(child) === pid);

async function startDrover(index: number): Promise<void> {
  const agent = await benchAgent(`drover-bench-cluster-${index}-`, { servers: [server!.rpc], gc_max_allocs: 500 }, { name: `bench-drover-${index}`, server: { enabled: false } });
  droverAgents.push(agent);
  drovers.push(await agent.start());
}

async function readyNodes(): Promise<number> {
  const nodes = (await (await fetch(`${server!.http}/v1/nodes`)).json()) as { Status: string }[];
  return nodes.filter((node) => node.Status === "ready").length;
}

function jobFile(id: string, kind: Kind): string {
  const path = join(dir, `${id}.hcl`);
  const constraint = `  constraint {
    attribute = "\${attr.drover.version}"
    operator  = "${kind === "drover" ? "is_set" : "is_not_set"}"
  }`;
  writeFileSync(path, sleepJobHcl(id, COUNT, { job: constraint }));
  return path;
}

/**
 * Blocking queries on the job's allocs until `count` are running, as the
 * CLI's monitor waits; calls `placed` when the server has created them all
 * (what the scheduler alone costs, before any client acts).
 */
async function untilRunning(id: string, count: number, placed: () => void = () => undefined, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let index = 0;
  let allPlaced = false;
  for (;;) {
    const res = await fetch(`${server!.http}/v1/job/${id}/allocations?index=${index}&wait=5s`);
    index = Number(res.headers.get("X-Nomad-Index") ?? 0);
    const allocs = ((await res.json()) as { ClientStatus: string; DesiredStatus: string }[]).filter((a) => a.DesiredStatus === "run");
    if (!allPlaced && allocs.length === count) {
      allPlaced = true;
      placed();
    }
    const live = allocs.filter((a) => a.ClientStatus === "running").length;
    if (live === count) return;
    if (Date.now() > deadline) throw new Error(`${id}: ${live}/${count} running after ${timeoutMs} ms`);
  }
}

async function untilGone(id: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${server!.http}/v1/job/${id}/allocations`);
    const allocs = res.ok ? ((await res.json()) as { ClientStatus: string }[]) : [];
    if (allocs.every((a) => a.ClientStatus !== "running" && a.ClientStatus !== "pending")) return;
    await sleep(100);
  }
}

/** Milliseconds from `nomad job run -detach` to all allocs placed, and to all running. */
async function timeJob(id: string, kind: Kind): Promise<{ placed: number; running: number }> {
  const file = jobFile(id, kind);
  const started = performance.now();
  let placed = Number.NaN;
  const run = await nomad(server!.http, "job", "run", "-detach", file);
  if (run.code !== 0) throw new Error(`nomad job run ${id}: ${run.stderr}`);
  await untilRunning(id, COUNT, () => (placed = performance.now() - started));
  return { placed, running: performance.now() - started };
}

async function stopJob(id: string): Promise<void> {
  await nomad(server!.http, "job", "stop", "-purge", id);
  await untilGone(id);
}

try {
  server = await nomadServerIn(join(dir, "server"));
  await server.start();
  for (let i = 0; i < NODES_PER_KIND; i++) {
    await startDrover(i);
    const client = await nomadClientIn(join(dir, `nomad-${i}`), `bench-nomad-${i}`, server);
    nomadClients.push(client);
    await client.start();
  }
  for (;;) {
    if ((await readyNodes()) === NODES_PER_KIND * 2) break;
    await sleep(100);
  }

  const times: Record<Kind, number[]> = { drover: [], nomad: [] };
  const placements: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    for (const kind of run % 2 === 0 ? (["drover", "nomad"] as const) : (["nomad", "drover"] as const)) {
      const id = `bench-${kind}-${run}`;
      const { placed, running } = await timeJob(id, kind);
      if (run > 0) {
        times[kind].push(running);
        placements.push(placed);
      }
      await stopJob(id);
    }
  }

  // Memory: both jobs running, 10 tasks per node.
  await timeJob("mem-drover", "drover");
  await timeJob("mem-nomad", "nomad");
  await sleep(SETTLE_MS);
  const droverAgents = drovers.map((agent) => agent.pid);
  const nomadAgents = nomadClients.map((agent) => agent.process.pid);
  const helperPss = (agents: number[]) => agents.flatMap(children).reduce((sum, pid) => sum + pss(pid), 0);
  const agentPss = (agents: number[], field?: "pss" | "anon") => agents.reduce((sum, pid) => sum + pss(pid, field), 0) / agents.length / MIB;
  const rows = {
    droverAgent: agentPss(droverAgents),
    nomadAgent: agentPss(nomadAgents),
    droverAgentAnon: agentPss(droverAgents, "anon"),
    nomadAgentAnon: agentPss(nomadAgents, "anon"),
    droverHelpers: helperPss(droverAgents) / COUNT / MIB,
    nomadHelpers: helperPss(nomadAgents) / COUNT / MIB,
  };

  const d = median(times.drover);
  const n = median(times.nomad);
  printTable(
    `Count-${COUNT} raw_exec job placed by a Nomad 0.12 server, \`nomad job run -detach\` until the server reports all running (median of ${RUNS}; goal: drover <= 0.5 x Nomad)`,
    ["client nodes", "p50 ms", "min ms", "max ms", "x Nomad"],
    [
      [`drover (${NODES_PER_KIND} nodes)`, d, Math.min(...times.drover), Math.max(...times.drover), d / n],
      [`Nomad 0.12 client (${NODES_PER_KIND} nodes)`, n, Math.min(...times.nomad), Math.max(...times.nomad), 1],
      ["floor: CLI and scheduler until all allocs exist (both kinds)", median(placements), Math.min(...placements), Math.max(...placements), ""],
    ],
  );
  printTable(
    `Memory with ${COUNT / NODES_PER_KIND} sleep tasks per node (PSS)`,
    ["client", "agent MiB", "of which anon MiB", "helpers MiB per task"],
    [
      ["drover", rows.droverAgent, rows.droverAgentAnon, rows.droverHelpers],
      ["Nomad 0.12", rows.nomadAgent, rows.nomadAgentAnon, rows.nomadHelpers],
    ],
  );
  console.log(machineLine());
  await stopJob("mem-drover");
  await stopJob("mem-nomad");
} finally {
  for (const agent of drovers) agent.kill("SIGKILL");
  for (const client of nomadClients) client.stopAll();
  server?.stopAll();
  for (const agent of droverAgents) await agent.cleanUp();
  killPids(pidsWithCmdline(dir));
  // A Nomad client mounts a tmpfs in each alloc's secrets dir.
  detachMountsUnder(dir);
  rmSync(dir, { recursive: true, force: true });
}
