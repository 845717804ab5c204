/**
 * Where the agent's memory per running task goes (issue 35): one compiled
 * agent, `FROM` raw_exec sleeps running, then `TO`; at each (and idle first),
 * after the agent settled, a diagnostic preload in the agent (given through
 * BUN_OPTIONS, which compiled binaries honour) runs `Bun.shrink()` and two full
 * collections, then writes JavaScriptCore's heap figures and mimalloc's
 * statistics; the bench reads /proc/PID/smaps_rollup and the agent's open
 * descriptors. Per task, the difference from FROM to TO divided by TO − FROM:
 *
 *   anon            Anonymous of smaps_rollup: what the task costs the agent
 *   live heap       heapStats().heapSize: live cells plus the native memory
 *                   cells report (string contents, buffers: "extra")
 *   JS blocks       mimalloc's 16 KiB bin: JavaScriptCore's MarkedBlocks (its
 *                   heap capacity less the extra); over live cells, what
 *                   part-filled blocks cost (JSC never moves a cell)
 *   other malloc    every other mimalloc bin and huge allocation: the engine's
 *                   and Bun's native objects (sockets, AbortSignals, SQLite)
 *   fds             descriptors by kind
 *
 *   bun bench/agent-memory.ts [--baseline-binary PATH] [FROM TO]   (default 50 300)
 *
 * With --baseline-binary, that build's agent is measured first, then this one's
 * (DROVER_BENCH_BINARY or dist/drover), in the same run. A collection and a
 * release before each reading, and a wait for the release to drop the compiled
 * code (RELEASE_LANDS_MS), take the garbage, the free pages and the start's
 * code out: what is left is what the tasks hold (bench/scale.ts's figure also
 * counts what the start leaves until the agent's own release,
 * agent/heap-release.ts).
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { readProcs, removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { detachMountsUnder } from "../src/runtime/mounts.ts";
import { spawnProcess, type ChildProcess } from "../src/runtime/spawn.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { freePort, killPids, pidsWithCmdline, sleep, waitFor } from "../test/helpers/index.ts";
import { sleepJobBody } from "../test/helpers/jobs.ts";
import { baselineArgs, machineLine, manyTasksAgentConfig, printTable } from "./lib.ts";

const { baselineBinary, numbers: counts } = baselineArgs();
const [FROM, TO] = counts.length === 2 ? counts : [50, 300];
if (!(FROM! < TO!)) throw new Error("FROM must be below TO");

/** Time for the agent to settle (its stats ticks, its periodic collection) before a reading. */
const SETTLE_MS = 12_000;
/** How long the preload may take to collect and write its figures. */
const READING_TIMEOUT_MS = 30_000;
/** Generous bounds, so that a broken run ends with an error instead of hanging. */
const START_TIMEOUT_MS = 300_000;
const HEALTHY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 120_000;
const EXIT_TIMEOUT_MS = 10_000;
/** mimalloc's bin of 16 KiB blocks: JavaScriptCore's MarkedBlocks live there. */
const JSC_BLOCK_BIN = /^bin M\s+40$/;
const KIB = 1024;

/**
 * How long a reading waits after its release: Bun.shrink() drops compiled code
 * only once the event loop idles, and a reading taken at once counted the
 * start's code (4-6 MiB of the first tasks' cost, docs/performance.md, memory-4).
 */
const RELEASE_LANDS_MS = 2_000;

/** Runs in the agent: on SIGUSR2, release and collect, wait for the release to land, collect again, then write the heap's figures and mimalloc's statistics. */
const PRELOAD = `
const { heapStats } = require("bun:jsc");
const { writeFileSync } = require("node:fs");
process.on("SIGUSR2", () => {
  Bun.shrink();
  Bun.gc(true);
  Bun.gc(true);
  setTimeout(() => {
    Bun.gc(true);
    setTimeout(report, ${RELEASE_LANDS_MS});
  }, ${RELEASE_LANDS_MS});
});
function report() {
  const stats = heapStats();
  console.error("=== mimalloc");
  Bun.unsafe.mimallocDump();
  console.error("=== end");
  writeFileSync(process.env.DROVER_MEMORY_READING, JSON.stringify({ heapSize: stats.heapSize, heapCapacity: stats.heapCapacity, extra: stats.extraMemorySize }));
}
`;

interface Reading {
  anon: number;
  heapSize: number;
  heapCapacity: number;
  extra: number;
  jscBlocks: number;
  otherMalloc: number;
  fds: Record<string, number>;
  threads: number;
}

const thisBinary = process.env.DROVER_BENCH_BINARY ?? ensureBinary();
const builds = [...(baselineBinary ? [{ label: "baseline", binary: baselineBinary }] : []), { label: "this", binary: thisBinary }];
const dir = mkdtempSync(join(tmpdir(), "drover-bench-agent-memory-"));
const preload = join(dir, "preload.cjs");
writeFileSync(preload, PRELOAD);
let agent: ChildProcess | null = null;
const cgroups = detectCgroups();
const cgroupParent = (label: string) => `drover-bench-agent-memory-${process.pid}-${label}`;

/** mimalloc's "current" bytes of the last dump in `text`: the 16 KiB bin, and all the rest. */
function mallocFigures(text: string): { jscBlocks: number; otherMalloc: number } {
  const dump = text.slice(text.lastIndexOf("=== mimalloc"), text.lastIndexOf("=== end"));
  let jscBlocks = 0;
  let all = 0;
  for (const line of dump.split("\n")) {
    const match = /^\s+(bin \w+\s+\d+|huge)\s*:\s+(.*)$/.exec(line);
    if (!match) continue;
    const sizes = [...match[2]!.matchAll(/([\d.]+)\s*(KiB|MiB|GiB|Ki|Mi|Gi|B)?/g)].map(([, value, unit]) => Number(value) * unitBytes(unit));
    const current = sizes[2] ?? 0;
    all += current;
    if (JSC_BLOCK_BIN.test(match[1]!)) jscBlocks = current;
  }
  return { jscBlocks, otherMalloc: all - jscBlocks };
}

function unitBytes(unit: string | undefined): number {
  if (unit?.startsWith("K")) return KIB;
  if (unit?.startsWith("M")) return KIB ** 2;
  if (unit?.startsWith("G")) return KIB ** 3;
  return 1;
}

/** The agent's descriptors by what they are (a socket, a FIFO, a file under the data dir's alloc/, ...). */
function fdKinds(pid: number, dataDir: string): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const kind = target.startsWith(dataDir) ? `data dir: ${target.slice(dataDir.length + 1).split("/")[0]}/` : target.replace(/\[\d+\]$/, "").replace(/:$/, "");
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

async function reading(pid: number, stderrFile: string, readingFile: string, dataDir: string): Promise<Reading> {
  await sleep(SETTLE_MS);
  rmSync(readingFile, { force: true });
  process.kill(pid, "SIGUSR2");
  await waitFor("the agent's memory reading", () => existsSync(readingFile) && readFileSync(readingFile, "utf8").endsWith("}"), { timeoutMs: READING_TIMEOUT_MS });
  const heap = JSON.parse(readFileSync(readingFile, "utf8")) as { heapSize: number; heapCapacity: number; extra: number };
  const anon = Number(/^Anonymous:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1]) * KIB;
  const threads = readdirSync(`/proc/${pid}/task`).length;
  return { anon, ...heap, ...mallocFigures(readFileSync(stderrFile, "utf8")), fds: fdKinds(pid, dataDir), threads };
}

async function untilRunning(address: string, job: string, count: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let index = 0;
  for (;;) {
    const res = await fetch(`${address}/v1/job/${job}/allocations?index=${index}&wait=5s`);
    index = Number(res.headers.get("X-Nomad-Index") ?? 0);
    const allocs = (await res.json()) as { ClientStatus: string }[];
    if (allocs.length === count && allocs.every((alloc) => alloc.ClientStatus === "running")) return;
    if (Date.now() > deadline) throw new Error(`${job}: not all ${count} running after ${START_TIMEOUT_MS} ms`);
  }
}

async function measure(label: string, binary: string): Promise<{ idle: Reading; from: Reading; to: Reading }> {
  const runDir = join(dir, label);
  const dataDir = join(runDir, "data");
  mkdirSync(runDir, { recursive: true });
  const port = await freePort();
  const config = join(runDir, "agent.json");
  writeFileSync(config, manyTasksAgentConfig({ dataDir, port, cgroupParent: cgroupParent(label), maxTasks: TO! }));
  const stderrFile = join(runDir, "agent.stderr");
  const readingFile = join(runDir, "reading.json");
  const address = `http://127.0.0.1:${port}`;
  // spawnProcess keeps BUN_* from its children, so the preload goes through env(1), which execs the agent in place.
  const stderr = openSync(stderrFile, "w");
  agent = spawnProcess({
    argv: ["env", `BUN_OPTIONS=--preload ${preload}`, `DROVER_MEMORY_READING=${readingFile}`, binary, "agent", "-config", config],
    env: process.env,
    stderr,
  });
  closeSync(stderr);
  const pid = agent.pid;
  await waitFor("the agent healthy", () => fetch(`${address}/v1/agent/health`).then((r) => r.ok, () => false), { timeoutMs: HEALTHY_TIMEOUT_MS });
  const post = async (job: string, count: number) => {
    // A small ephemeral disk: the node's disk must not be what limits how many are placed.
    const body = sleepJobBody(job, count, { group: { EphemeralDisk: { SizeMB: 10 } }, task: { Config: { command: "/bin/sleep", args: ["3600"] }, Resources: { CPU: 1, MemoryMB: 16 }, LogConfig: { MaxFiles: 1, MaxFileSizeMB: 1 } } });
    const res = await fetch(`${address}/v1/jobs`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
    if (!res.ok) throw new Error(`register ${job}: ${res.status} ${await res.text()}`);
    await untilRunning(address, job, count);
  };
  try {
    const idle = await reading(pid, stderrFile, readingFile, dataDir);
    await post("first", FROM!);
    const from = await reading(pid, stderrFile, readingFile, dataDir);
    await post("more", TO! - FROM!);
    const to = await reading(pid, stderrFile, readingFile, dataDir);
    for (const job of ["first", "more"]) await fetch(`${address}/v1/job/${job}?purge=true`, { method: "DELETE" });
    await waitFor("the tasks stopped", () => taskPids(label).length === 0, { timeoutMs: STOP_TIMEOUT_MS });
    return { idle, from, to };
  } finally {
    await cleanup();
  }
}

/** The task cgroups the agent made under a build's parent, in each controller's hierarchy. */
function taskCgroups(label: string): string[] {
  return parentCgroupDirs(cgroups, cgroupParent(label))
    .filter((parent) => existsSync(parent))
    .flatMap((parent) => readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(parent, entry.name)));
}

const taskPids = (label: string) => [...new Set(taskCgroups(label).flatMap((cgroup) => readProcs(cgroup)))];

async function cleanup(): Promise<void> {
  if (agent) {
    agent.kill("SIGTERM");
    await Promise.race([agent.exited, sleep(EXIT_TIMEOUT_MS)]);
    agent.kill("SIGKILL");
    agent = null;
  }
  killPids(pidsWithCmdline(dir));
  // The allocs' secrets tmpfs and disk images: the agent was stopped before its GC would have unmounted them.
  detachMountsUnder(dir);
  // Tasks the agent left (a run that failed halfway) are killed through their cgroups; then the cgroups go.
  for (const { label } of builds) {
    killPids(taskPids(label));
    await waitFor(`the ${label} build's tasks gone`, () => taskPids(label).length === 0);
    for (const cgroup of taskCgroups(label)) removeDir(cgroup);
    for (const parent of parentCgroupDirs(cgroups, cgroupParent(label))) if (existsSync(parent)) removeDir(parent);
  }
}

process.on("SIGINT", () => void cleanup().finally(() => process.exit(130)));

const rows: (string | number)[][] = [];
/** What the first FROM tasks cost over the idle agent, in all: the part of bench/scale.ts's growth figure no later task adds. */
const firstRows: (string | number)[][] = [];
const fdLines: string[] = [];
for (const { label, binary } of builds) {
  const load = loadavg()[0]!.toFixed(1);
  const { idle, from, to } = await measure(label, binary);
  const n = TO! - FROM!;
  const perTask = (pick: (r: Reading) => number) => (pick(to) - pick(from)) / n / KIB;
  rows.push([
    label,
    `${load} → ${loadavg()[0]!.toFixed(1)}`,
    perTask((r) => r.anon),
    perTask((r) => r.heapSize),
    perTask((r) => r.heapSize - r.extra),
    perTask((r) => r.extra),
    perTask((r) => r.jscBlocks),
    perTask((r) => r.otherMalloc),
    perTask((r) => r.anon - r.jscBlocks - r.otherMalloc),
    (to.anon - idle.anon) / TO! / KIB,
  ]);
  const overIdle = (pick: (r: Reading) => number) => (pick(from) - pick(idle)) / KIB / KIB;
  firstRows.push([
    label,
    overIdle((r) => r.anon),
    overIdle((r) => r.heapSize),
    overIdle((r) => r.heapSize - r.extra),
    overIdle((r) => r.jscBlocks),
    overIdle((r) => r.otherMalloc),
    overIdle((r) => r.anon - r.jscBlocks - r.otherMalloc),
    `${idle.threads} → ${from.threads} → ${to.threads}`,
  ]);
  const kinds = new Set([...Object.keys(from.fds), ...Object.keys(to.fds)]);
  fdLines.push(`${label}: descriptors per task: ${[...kinds].map((kind) => `${kind} ${(((to.fds[kind] ?? 0) - (from.fds[kind] ?? 0)) / n).toFixed(2)}`).filter((line) => !line.endsWith(" 0.00")).join(", ")}`);
}
printTable(
  `The agent's memory per running task, ${FROM} → ${TO} raw_exec sleeps (after Bun.shrink(), two full collections and the release landed; KiB per task)`,
  ["build", "load average", "anon", "live heap", "of which cells", "of which extra", "JS blocks (16 KiB bin)", "other malloc", "rest (pages, stacks)", `anon over idle, at ${TO}`],
  rows,
);
printTable(
  `What the first ${FROM} cost over the idle agent (MiB in all; the same readings)`,
  ["build", "anon", "live heap", "of which cells", "JS blocks (16 KiB bin)", "other malloc", "rest (pages, stacks)", `threads idle → ${FROM} → ${TO}`],
  firstRows,
);
for (const line of fdLines) console.log(line);
console.log(machineLine());
rmSync(dir, { recursive: true, force: true });
