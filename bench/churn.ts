/**
 * A stream of short tasks: a parameterized batch job dispatched at a fixed
 * rate for a fixed time, on the compiled drover and on Nomad 0.12.12 -dev in
 * the same run, one after the other, each on a fresh agent and data dir.
 *
 *   dispatch → running    PUT /v1/job/churn/dispatch sent, until the child's task
 *                         StartedAt (its TaskState, read from /v1/allocations)
 *   dispatch → complete   until the alloc's ModifyTime once it reads complete: the
 *                         client's report as the API shows it
 *   agent RSS, data dir   sampled every SAMPLE_MS from the agent's /proc/PID/status
 *                         and a walk of its data dir (allocated blocks), over time;
 *                         per dispatched job: growth over the run / jobs dispatched,
 *                         every job still kept (no GC threshold passes in a run)
 *   sustained rate        a ramp of rates (RAMP_STEP_S each, fresh agent): the highest
 *                         rate whose dispatch → complete p99 stays under 1 s
 *
 *   bun bench/churn.ts [--rate 40] [--duration 60] [--warmup 10] [--ramp 40,80,160|none]
 *                      [--ramp-step 5] [--svg docs/churn.svg (no plot unless asked)] [--only drover|nomad]
 *
 *   "MiB per job kept" is the RSS growth over the measured run's jobs, from
 *   the agent as it stands after a warm-up at the same rate (--warmup seconds,
 *   its jobs kept too): what each further kept job costs, not the one-time
 *   costs a first burst pays (code compiled and optimized, SQLite's page
 *   caches filled, the runtime's heap grown to its working size), which the
 *   table shows apart as "RSS start → warmed → after".
 *
 *   DROVER_BENCH_BINARY=path     another drover binary (a build of main, to compare)
 *   DROVER_BENCH_DISK_LIMIT=poll the agent's client.disk_limit (default: "filesystem", the
 *                                agent's own default: an ext4 image made per alloc; Nomad
 *                                0.12 makes none, so "poll" compares like with like)
 *
 * The task is raw_exec /bin/true with the agents' default settings. Nomad runs
 * with -dev on 127.0.0.1 ports the bench picks, a private data dir and raw_exec
 * on; every process either agent started is killed by pid at the end.
 */
import { closeSync, mkdtempSync, openSync, readdirSync, lstatSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { spawnProcess, type ChildProcess } from "../src/runtime/spawn.ts";
import { readProcessUsage } from "../src/stats/process.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { freePort, killPids, pidsWithCmdline, sleep } from "../test/helpers/index.ts";
import { benchAgent, cpuSeconds, machineLine, median, percentile, printTable } from "./lib.ts";

const MIB = 1024 * 1024;
const DISK_LIMIT = process.env.DROVER_BENCH_DISK_LIMIT ?? "filesystem";
/** How often memory and the data dir are sampled. */
const SAMPLE_MS = 1_000;
/** How often the alloc list is read while waiting for the dispatched jobs to finish: each read lists every alloc, which costs the agent too. */
const POLL_MS = 2_000;
/** Jobs not finished this long after the last dispatch are counted as failed (unfinished). */
const FINISH_TIMEOUT_MS = 180_000;
/** After the last job finished: time for the agent to settle (its client GC, Bun's heap collection) before the last sample. */
const SETTLE_MS = 10_000;
/** How long an agent gets to start and register its node. */
const START_TIMEOUT_MS = 60_000;
/** How long Nomad gets to stop on SIGINT before it is killed. */
const STOP_TIMEOUT_MS = 15_000;
/** The p99 a sustained rate must stay under. */
const SUSTAINED_P99_MS = 1_000;

interface Options {
  rate: number;
  durationS: number;
  /** Seconds of dispatching at `rate` before the measured run, whose jobs stay kept. */
  warmupS: number;
  ramp: number[];
  rampStepS: number;
  /** Where the plot goes; none unless asked, so a trial run leaves the README's plot as it is. */
  svg: string | undefined;
  only: "drover" | "nomad" | undefined;
}

function parseOptions(argv: string[]): Options {
  const options: Options = { rate: 40, durationS: 60, warmupS: 10, ramp: [40, 80, 160], rampStepS: 5, svg: undefined, only: undefined };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i]!, argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    const positive = (text = value) => {
      const n = Number(text);
      if (!(n > 0)) throw new Error(`${flag}: expected a number above zero, got ${text}`);
      return n;
    };
    if (flag === "--rate") options.rate = positive();
    else if (flag === "--duration") options.durationS = positive();
    else if (flag === "--warmup") options.warmupS = positive();
    else if (flag === "--ramp-step") options.rampStepS = positive();
    else if (flag === "--svg") options.svg = value;
    else if (flag === "--ramp") options.ramp = value === "none" ? [] : value.split(",").map((rate) => positive(rate));
    else if (flag === "--only" && (value === "drover" || value === "nomad")) options.only = value;
    else throw new Error(`unknown flag or value: ${flag} ${value}`);
  }
  if (options.ramp.some((rate) => !(rate > 0))) throw new Error("--ramp: expected rates above zero separated by commas, or none");
  return options;
}

/** One agent under test: its API, its process, and its data dir. */
interface Agent {
  name: string;
  address: string;
  pid: number;
  dataDir: string;
  stop(): Promise<void>;
}

/** Resolved (and built if stale) once, so every agent of a run is the same binary. */
let droverBinary: string | undefined;

async function startDrover(): Promise<Agent> {
  const binary = (droverBinary ??= process.env.DROVER_BENCH_BINARY ?? ensureBinary());
  const bench = await benchAgent("drover-churn-", { disk_limit: DISK_LIMIT }, { runtime: { name: "bun", argv: [binary] } });
  const child = await bench.start();
  return {
    name: "drover",
    address: bench.address,
    pid: child.pid,
    dataDir: join(bench.dir, "data"),
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
      await bench.cleanUp();
    },
  };
}

function nomadBinary(): string {
  return execFileSync("/work/shared/nomad/unpack", { encoding: "utf8" }).trim();
}

async function startNomad(): Promise<Agent> {
  const dir = mkdtempSync(join(tmpdir(), "nomad-churn-"));
  const [http, rpc, serf] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, "agent.json");
  const dataDir = join(dir, "data");
  writeFileSync(
    config,
    JSON.stringify({
      bind_addr: "127.0.0.1",
      data_dir: dataDir,
      log_level: "WARN",
      ports: { http, rpc, serf },
      plugin: { raw_exec: { config: { enabled: true } } },
    }),
  );
  const log = openSync(join(dir, "agent.log"), "a");
  const child: ChildProcess = spawnProcess({ argv: [nomadBinary(), "agent", "-dev", "-config", config], env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdout: log, stderr: log });
  closeSync(log);
  return {
    name: "nomad 0.12.12",
    address: `http://127.0.0.1:${http}`,
    pid: child.pid,
    dataDir,
    async stop() {
      child.kill("SIGINT");
      await Promise.race([child.exited, sleep(STOP_TIMEOUT_MS)]);
      killPids([child.pid, ...pidsWithCmdline(dir)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function api<T>(agent: Agent, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${agent.address}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!response.ok) throw new Error(`${agent.name}: ${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function waitReady(agent: Agent): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const nodes = await api<{ Status: string }[]>(agent, "GET", "/v1/nodes").catch(() => []);
    if (nodes.some((node) => node.Status === "ready")) return;
    await sleep(POLL_MS / 5);
  }
  throw new Error(`${agent.name}: no ready node after ${START_TIMEOUT_MS} ms`);
}

const JOB_ID = "churn";

/** The parameterized batch job: one raw_exec /bin/true, no restarts. */
const churnJob = {
  ID: JOB_ID,
  Name: JOB_ID,
  Type: "batch",
  Datacenters: ["dc1"],
  ParameterizedJob: { Payload: "forbidden", MetaRequired: [], MetaOptional: ["n"] },
  TaskGroups: [
    {
      Name: "g",
      Count: 1,
      RestartPolicy: { Attempts: 0, Mode: "fail", Interval: 60_000_000_000, Delay: 1_000_000_000 },
      ReschedulePolicy: { Attempts: 0, Unlimited: false },
      EphemeralDisk: { SizeMB: 10 },
      Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/true" }, Resources: { CPU: 20, MemoryMB: 16 }, LogConfig: { MaxFiles: 1, MaxFileSizeMB: 1 } }],
    },
  ],
};

interface Sample {
  /** Seconds since the run's first dispatch. */
  t: number;
  rssMiB: number;
  dataDirMiB: number;
}

function rssOf(pid: number): number {
  return readProcessUsage(pid)?.rss ?? Number.NaN;
}

/** Bytes the files under `dir` hold on disk (du): a file vanishing mid-walk is skipped. */
function diskUsage(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const path = join(dir, name);
    try {
      const stat = lstatSync(path);
      total += stat.blocks * 512;
      if (stat.isDirectory()) total += diskUsage(path);
    } catch {
      // Removed by the agent's GC while we walked.
    }
  }
  return total;
}

interface AllocStub {
  JobID: string;
  ClientStatus: string;
  ModifyTime: number;
  TaskStates?: Record<string, { StartedAt?: string | null }> | null;
}

interface RunResult {
  dispatched: number;
  /** Dispatched and accepted: the jobs the agent keeps. */
  kept: number;
  toRunning: number[];
  toComplete: number[];
  failed: number;
  samples: Sample[];
  /** RSS and data dir just before the measured dispatches, and after they all finished and the agent settled. */
  rssBefore: number;
  rssAfter: number;
  /** The agent process's own CPU (user + system) from the first dispatch until the run settled; not its helpers'. */
  cpuSeconds: number;
  diskBefore: number;
  diskAfter: number;
}

/** Dispatches at `rate` per second for `durationS`, waits for every child to finish, and reads the latencies. */
async function runAtRate(agent: Agent, rate: number, durationS: number, settle: boolean): Promise<RunResult> {
  const sent = new Map<string, number>();
  // A dispatch the agent refuses or drops (Nomad 0.12 resets connections once it falls behind)
  // is a failed job of the run, not the end of the bench.
  let refused = 0;
  const dispatchOne = async (n: number) => {
    const at = Date.now();
    try {
      const answer = await api<{ DispatchedJobID: string }>(agent, "PUT", `/v1/job/${JOB_ID}/dispatch`, { Meta: { n: String(n) } });
      sent.set(answer.DispatchedJobID, at);
    } catch {
      refused++;
    }
  };
  const samples: Sample[] = [];
  const start = Date.now();
  const sample = () => samples.push({ t: (Date.now() - start) / 1000, rssMiB: rssOf(agent.pid) / MIB, dataDirMiB: diskUsage(agent.dataDir) / MIB });
  const rssBefore = rssOf(agent.pid);
  const cpuBefore = cpuSeconds(agent.pid);
  const diskBefore = diskUsage(agent.dataDir);
  sample();
  const sampler = setInterval(sample, SAMPLE_MS);
  const total = Math.round(rate * durationS);
  const pending: Promise<void>[] = [];
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    pending.push(dispatchOne(n));
  }
  await Promise.all(pending);
  const stubs = await waitFinished(agent, sent);
  if (settle) await sleep(SETTLE_MS);
  clearInterval(sampler);
  sample();
  const toRunning: number[] = [];
  const toComplete: number[] = [];
  // A dispatched job with no alloc, or one not complete (failed, or unfinished at the deadline), counts as failed.
  let failed = refused + sent.size - stubs.length;
  for (const stub of stubs) {
    const at = sent.get(stub.JobID)!;
    const started = stub.TaskStates?.t?.StartedAt;
    if (started) toRunning.push(Date.parse(started) - at);
    if (stub.ClientStatus === "complete") toComplete.push(stub.ModifyTime / 1e6 - at);
    else failed++;
  }
  return {
    dispatched: sent.size + refused,
    kept: sent.size,
    toRunning,
    toComplete,
    failed,
    samples,
    rssBefore,
    rssAfter: rssOf(agent.pid),
    cpuSeconds: cpuSeconds(agent.pid) - cpuBefore,
    diskBefore,
    diskAfter: diskUsage(agent.dataDir),
  };
}

/** Reads /v1/allocations until every child in `sent` has an alloc that finished; those allocs. */
async function waitFinished(agent: Agent, sent: ReadonlyMap<string, number>): Promise<AllocStub[]> {
  const deadline = Date.now() + FINISH_TIMEOUT_MS;
  for (;;) {
    const stubs = (await api<AllocStub[]>(agent, "GET", "/v1/allocations")).filter((stub) => sent.has(stub.JobID));
    const finished = stubs.filter((stub) => stub.ClientStatus === "complete" || stub.ClientStatus === "failed" || stub.ClientStatus === "lost");
    if (finished.length >= sent.size) return finished;
    if (Date.now() > deadline) {
      console.error(`${agent.name}: ${sent.size - finished.length} of ${sent.size} dispatched jobs unfinished after ${FINISH_TIMEOUT_MS} ms; counted as failed`);
      return stubs;
    }
    await sleep(POLL_MS);
  }
}

async function withAgent<T>(start: () => Promise<Agent>, fn: (agent: Agent) => Promise<T>): Promise<T> {
  const agent = await start();
  try {
    await waitReady(agent);
    await api(agent, "POST", "/v1/jobs", { Job: churnJob });
    return await fn(agent);
  } finally {
    await agent.stop();
  }
}

interface AgentFigures {
  name: string;
  /** RSS before the warm-up (the agent just started and ready). */
  rssStart: number;
  run: RunResult;
  /** The highest ramp rate whose p99 stayed under SUSTAINED_P99_MS, and each step's p99. */
  sustained: number | undefined;
  ramp: { rate: number; p99: number }[];
}

async function measure(name: string, start: () => Promise<Agent>, options: Options): Promise<AgentFigures> {
  console.error(`${name}: ${options.rate}/s for ${options.warmupS} s (warm-up), then ${options.durationS} s`);
  const { rssStart, run } = await withAgent(start, async (agent) => {
    const warmup = await runAtRate(agent, options.rate, options.warmupS, true);
    return { rssStart: warmup.rssBefore, run: await runAtRate(agent, options.rate, options.durationS, true) };
  });
  const ramp: { rate: number; p99: number }[] = [];
  let sustained: number | undefined;
  for (const rate of options.ramp) {
    console.error(`${name}: ramp step ${rate}/s for ${options.rampStepS} s`);
    const step = await withAgent(start, (agent) => runAtRate(agent, rate, options.rampStepS, false));
    const p99 = step.failed > 0 ? Number.POSITIVE_INFINITY : percentile(step.toComplete, 99);
    ramp.push({ rate, p99 });
    if (p99 >= SUSTAINED_P99_MS) break;
    sustained = rate;
  }
  return { name, rssStart, run, sustained, ramp };
}

/** Memory (top) and data dir size (bottom) over time, one line per agent, drawn as a plain SVG. */
function plot(figures: readonly AgentFigures[], title: string): string {
  const width = 720;
  const panel = 220;
  const margin = { left: 60, right: 150, top: 40, bottom: 40 };
  const colours = ["#1f77b4", "#d62728", "#2ca02c"];
  const maxT = Math.max(1, ...figures.flatMap((f) => f.run.samples.map((s) => s.t)));
  const panels: { label: string; value: (s: Sample) => number }[] = [
    { label: "agent RSS (MiB)", value: (s) => s.rssMiB },
    { label: "data dir (MiB)", value: (s) => s.dataDirMiB },
  ];
  const plotWidth = width - margin.left - margin.right;
  const parts: string[] = [];
  parts.push(`<text x="${margin.left}" y="22" font-size="14" font-family="sans-serif">${escapeXml(title)}</text>`);
  panels.forEach((p, i) => {
    const top = margin.top + i * (panel + margin.bottom);
    const maxV = Math.max(1, ...figures.flatMap((f) => f.run.samples.map(p.value))) * 1.1;
    const x = (t: number) => margin.left + (t / maxT) * plotWidth;
    const y = (v: number) => top + panel - (v / maxV) * panel;
    parts.push(`<rect x="${margin.left}" y="${top}" width="${plotWidth}" height="${panel}" fill="none" stroke="#999"/>`);
    for (let k = 0; k <= 4; k++) {
      const v = (maxV * k) / 4;
      parts.push(`<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`);
      parts.push(`<text x="${margin.left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end" font-family="sans-serif">${v.toFixed(v >= 10 ? 0 : 1)}</text>`);
      const t = (maxT * k) / 4;
      parts.push(`<text x="${x(t)}" y="${top + panel + 14}" font-size="11" text-anchor="middle" font-family="sans-serif">${t.toFixed(0)} s</text>`);
    }
    parts.push(`<text x="${margin.left}" y="${top - 6}" font-size="12" font-family="sans-serif">${p.label}</text>`);
    figures.forEach((f, j) => {
      const points = f.run.samples.map((s) => `${x(s.t).toFixed(1)},${y(p.value(s)).toFixed(1)}`).join(" ");
      parts.push(`<polyline points="${points}" fill="none" stroke="${colours[j % colours.length]}" stroke-width="2"/>`);
    });
  });
  figures.forEach((f, j) => {
    const ly = margin.top + 10 + j * 18;
    parts.push(`<line x1="${width - margin.right + 12}" x2="${width - margin.right + 32}" y1="${ly}" y2="${ly}" stroke="${colours[j % colours.length]}" stroke-width="2"/>`);
    parts.push(`<text x="${width - margin.right + 38}" y="${ly + 4}" font-size="12" font-family="sans-serif">${escapeXml(f.name)}</text>`);
  });
  const height = margin.top + 2 * (panel + margin.bottom);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join("\n")}\n</svg>\n`;
}

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const loadBefore = loadavg()[0]!;
  const figures: AgentFigures[] = [];
  if (options.only !== "nomad") figures.push(await measure("drover", startDrover, options));
  if (options.only !== "drover") figures.push(await measure("nomad 0.12.12 -dev", startNomad, options));
  const loadAfter = loadavg()[0]!;
  const ms = (value: number) => value.toFixed(0);
  printTable(
    `churn: a parameterized batch job (raw_exec /bin/true) dispatched ${options.rate}/s for ${options.durationS} s`,
    ["agent", "dispatched", "failed or unfinished", "→ running p50/p99 ms", "→ complete p50/p99 ms", "RSS start → warmed → after MiB", "MiB per job kept", "data dir before → after MiB", `sustained /s (p99 < ${SUSTAINED_P99_MS} ms)`, "agent CPU ms per job"],
    figures.map(({ name, rssStart, run, sustained, ramp }) => [
      name,
      String(run.dispatched),
      String(run.failed),
      `${ms(median(run.toRunning))} / ${ms(percentile(run.toRunning, 99))}`,
      `${ms(median(run.toComplete))} / ${ms(percentile(run.toComplete, 99))}`,
      `${(rssStart / MIB).toFixed(1)} → ${(run.rssBefore / MIB).toFixed(1)} → ${(run.rssAfter / MIB).toFixed(1)}`,
      ((run.rssAfter - run.rssBefore) / MIB / run.kept).toFixed(4),
      `${(run.diskBefore / MIB).toFixed(1)} → ${(run.diskAfter / MIB).toFixed(1)}`,
      ramp.length === 0 ? "not run" : `${sustained ?? `< ${ramp[0]!.rate}`} (${ramp.map((step) => `${step.rate}/s: p99 ${ms(step.p99)}`).join(", ")})`,
      ((run.cpuSeconds * 1000) / run.dispatched).toFixed(2),
    ]),
  );
  console.log(machineLine());
  console.log(`drover's client.disk_limit = "${DISK_LIMIT}"`);
  console.log(`load average (1 min): ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after`);
  if (options.svg !== undefined) {
    writeFileSync(options.svg, plot(figures, `${options.rate} dispatches/s for ${options.durationS} s: agent memory and data dir`));
    console.log(`plot: ${options.svg}`);
  }
}

await main();
