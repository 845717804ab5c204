/** Shared pieces of the bench/ scripts: statistics, the printed table, and a compiled agent to measure. */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { readProcs, removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { detachMountsUnder } from "../src/runtime/mounts.ts";
import { spawnProcess, type ChildProcess } from "../src/runtime/spawn.ts";
import { readProcessUsage } from "../src/stats/process.ts";
import { NS_PER_SECOND } from "../src/lib/units.ts";
import { droverRuntime, type DroverRuntime } from "../test/helpers/runtimes.ts";
import { freePort, killPids, pidsWithCmdline, sleep, waitFor } from "../test/helpers/index.ts";

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: readonly number[]) => percentile(values, 50);

/** Prints rows as an aligned Markdown table (so it can be pasted into the README). */
export function printTable(title: string, header: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const cells = [header, ...rows].map((row) => row.map((cell) => (typeof cell === "number" ? format(cell) : cell)));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(`\n${title}\n`);
  console.log(line(cells[0]!));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of cells.slice(1)) console.log(line(row));
  console.log();
}

function format(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export interface ProcessMemory {
  rss: number;
  pss: number;
  /** The process's own memory (heap, stacks): what it allocated, not the binary's pages it shares. */
  anon: number;
  file: number;
}

/** A process's memory in bytes from the text of its /proc/PID/smaps_rollup; NaN for a field this kernel does not report. */
export function parseSmapsRollup(text: string): ProcessMemory {
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN) * 1024;
  return { rss: field("Rss"), pss: field("Pss"), anon: field("Pss_Anon"), file: field("Pss_File") };
}

/** `pid`'s memory (parseSmapsRollup); throws, naming the file, once the process is gone. */
export const memoryOf = (pid: number): ProcessMemory => parseSmapsRollup(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));

/** CPU seconds (user + system, every thread, exited ones included) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const usage = readProcessUsage(pid);
  if (usage === null) throw new Error(`process ${pid} is gone: its CPU time cannot be read`);
  return (usage.userNs + usage.systemNs) / NS_PER_SECOND;
}

/** Machine facts printed under each table so figures are read in context. */
/**
 * A comparing bench's arguments: `--baseline-binary PATH` (an older build, measured in the
 * same run before this one) and the positive numbers among the rest (its sizes).
 */
export function baselineArgs(argv: readonly string[] = process.argv.slice(2)): { baselineBinary: string | undefined; numbers: number[] } {
  const flag = "--baseline-binary";
  const at = argv.indexOf(flag);
  const baselineBinary = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0 && !baselineBinary) throw new Error(`${flag} needs a path`);
  const numbers = argv
    .filter((_, i) => at < 0 || (i !== at && i !== at + 1))
    .map(Number)
    .filter((n) => n > 0);
  return { baselineBinary, numbers };
}

/**
 * An agent config (JSON text) for a bench that runs up to `maxTasks` raw_exec tasks on one node;
 * `client` adds to or overrides its client block.
 */
export function manyTasksAgentConfig(options: { dataDir: string; port: number; cgroupParent: string; maxTasks: number; client?: Record<string, unknown> }): string {
  return JSON.stringify({
    data_dir: options.dataDir,
    ports: { http: options.port },
    log_level: "WARN",
    client: {
      cgroup_parent: options.cgroupParent,
      gc_max_allocs: 10 * options.maxTasks,
      // Placement is not what is measured: room for every task whatever the host's size.
      cpu_total_compute: 1_000_000,
      memory_total_mb: 1_000_000,
      min_dynamic_port: 20000,
      max_dynamic_port: 32000,
      ...options.client,
    },
    plugin: { raw_exec: { config: { enabled: true } } },
  });
}

/**
 * Pages the machine has allocated since boot (/proc/vmstat, every zone): a
 * log reader's row allocates one per 4 KiB of its files, and the pages its
 * writers' pipes cannot take back from it.
 */
export function pagesAllocated(): number {
  return readFileSync("/proc/vmstat", "utf8")
    .split("\n")
    .filter((line) => line.startsWith("pgalloc_"))
    .reduce((sum, line) => sum + Number(line.split(" ")[1]), 0);
}

export function machineLine(): string {
  const os = require("node:os") as typeof import("node:os");
  return `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Linux ${os.release()}`;
}

/** How long a killed task gets to leave its cgroup before the clean-up gives up on removing it. */
const CGROUP_EMPTY_TIMEOUT_MS = 5_000;

/** How often the health endpoint is tried while an agent starts; small next to what is measured. */
const HEALTH_POLL_MS = 2;

export interface BenchAgent {
  /** The agent's dir; its data dir is `<dir>/data`. */
  readonly dir: string;
  readonly address: string;
  /** Starts the agent (again), with `env` added to this process's, and resolves once its API answers. */
  start(env?: Record<string, string>): Promise<ChildProcess>;
  /** Ends everything it ran and removes its dir and cgroups. */
  cleanUp(): Promise<void>;
}

/**
 * An agent on a free port, logging at WARN, raw_exec on, with `client`
 * config merged in, `extra.plugin` beside raw_exec's, run by `extra.runtime`
 * (the compiled binary by default), and the rest of `extra` at the top level
 * (a node name, the embedded server off).
 */
export async function benchAgent(
  prefix: string,
  client: Record<string, unknown> = {},
  extra: { plugin?: Record<string, unknown>; runtime?: DroverRuntime } & Record<string, unknown> = {},
): Promise<BenchAgent> {
  const { plugin, runtime: chosen, ...top } = extra;
  const runtime = chosen ?? droverRuntime("bun");
  const cgroupParent = `drover-bench-${process.pid}-${runtime.name}`;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const port = await freePort();
  // An agent serving TLS (a `tls` block with http = true) is polled over https, its certificate unchecked.
  const tls = (top.tls as { http?: boolean } | undefined)?.http === true;
  const address = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  const config = join(dir, "agent.json");
  writeFileSync(
    config,
    JSON.stringify({
      data_dir: join(dir, "data"),
      ports: { http: port },
      log_level: "WARN",
      ...top,
      client: { cgroup_parent: cgroupParent, ...client },
      plugin: { raw_exec: { config: { enabled: true } }, ...plugin },
    }),
  );
  const cleanUp = () => cleanUpAgent(dir, cgroupParent);
  unfinished.add(cleanUp);
  cleanUpOnFailure();
  return {
    dir,
    address,
    async start(env = {}) {
      const log = openSync(join(dir, "agent.log"), "a");
      const agent = spawnProcess({ argv: [...runtime.argv, "agent", "-config", config], env: { ...process.env, ...env }, stderr: log });
      closeSync(log);
      const init = tls ? { tls: { rejectUnauthorized: false } } : {};
      while (!(await fetch(`${address}/v1/agent/health`, init).then((r) => r.ok, () => false))) await sleep(HEALTH_POLL_MS);
      return agent;
    },
    cleanUp: () => {
      unfinished.delete(cleanUp);
      return cleanUp();
    },
  };
}

/** Clean-ups of the agents started and not yet cleaned up, for a bench that fails or is interrupted mid-run. */
const unfinished = new Set<() => Promise<void>>();
let cleanUpOnFailureInstalled = false;

/** Adds a bench's own clean-up (its scratch dir, cgroups, log pumps) to what a failed or interrupted run does. */
export function onBenchFailure(cleanUp: () => void | Promise<void>): void {
  unfinished.add(async () => cleanUp());
  cleanUpOnFailure();
}

/**
 * A bench that throws, or is stopped with ^C, still ends its agents' executors
 * and log pumps and removes their mounts, cgroups and dirs, as a finished run
 * does: otherwise each failed run left them behind for the next to trip on.
 */
function cleanUpOnFailure(): void {
  if (cleanUpOnFailureInstalled) return;
  cleanUpOnFailureInstalled = true;
  const fail = async (why: unknown, code: number) => {
    if (why !== undefined) console.error(why);
    for (const cleanUp of [...unfinished]) await cleanUp().catch((err: unknown) => console.error("cleaning up:", err));
    process.exit(code);
  };
  process.on("uncaughtException", (err) => void fail(err, 1));
  process.on("unhandledRejection", (err) => void fail(err, 1));
  process.on("SIGINT", () => void fail(undefined, 130));
  process.on("SIGTERM", () => void fail(undefined, 143));
}

/**
 * Ends everything a benchmark's agent left (executors and the log pump
 * outlive agents by design) and removes its data dir and cgroups: processes
 * whose command line names `dir`, then each task's cgroup under
 * `cgroupParent` (emptied before it is removed), then the dir.
 */
async function cleanUpAgent(dir: string, cgroupParent: string): Promise<void> {
  killPids(pidsWithCmdline(dir));
  for (const parent of parentCgroupDirs(detectCgroups(), cgroupParent)) {
    if (!existsSync(parent)) continue;
    for (const task of readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      const cgroup = join(parent, task.name);
      killPids(readProcs(cgroup));
      await waitFor(`${cgroup} empty`, () => readProcs(cgroup).length === 0, { timeoutMs: CGROUP_EMPTY_TIMEOUT_MS });
      removeDir(cgroup);
    }
    removeDir(parent);
  }
  detachMountsUnder(dir);
  rmSync(dir, { recursive: true, force: true });
}
