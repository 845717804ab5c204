/**
 * The chaos suite: the compiled agent under the failures an operator's host
 * throws at it, each scenario judged on what a user would count.
 *
 *   npm run chaos            every scenario (a few minutes)
 *   npm run chaos -- kill    the scenarios whose name contains "kill"
 *
 *   scenario ──> a fresh agent with a service job of COUNT tasks, each printing
 *                numbered lines and recording every start of itself
 *            ──> the failures (SIGKILL storms during updates, executor and log
 *                pump kills, SIGSTOP, a full disk, a load run)
 *            ──> converge (every alloc of the newest version running), then stop
 *            ──> one row: tasks doubled, orphaned, lost, lines lost, restarts
 *                miscounted (each should be 0)
 *
 * Not part of `npm test`: it takes minutes and SIGKILLs agents on purpose.
 * Every process it starts is killed by pid at the end of its scenario.
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { readProcs, removeDir } from "../../src/cgroups/files.ts";
import { parentCgroupDirs } from "../../src/cgroups/paths.ts";
import { detachMountsUnder } from "../../src/runtime/mounts.ts";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import { machineLine, percentile, printTable } from "../../bench/lib.ts";
import { ensureBinary } from "../helpers/binary.ts";
import { freePort, isRunning, killPids, pidsWithCmdline, processEnv, sleep } from "../helpers/index.ts";

/** Tasks per scenario: enough for several to be mid-change at any moment, few enough for 2 cores. */
const COUNT = 4;
/** How long a scenario may take to converge after its failures before what is missing counts as lost. */
const CONVERGE_TIMEOUT_MS = 60_000;
/** Agent restarts in the SIGKILL storm, each during a job update. */
const STORM_KILLS = 12;
/** The latest moment after an update at which the storm's SIGKILL lands. */
const STORM_MAX_DELAY_MS = 400;
const EXECUTOR_KILLS = 6;
const LOGMON_KILLS = 6;
const SIGSTOP_MS = 3_000;
/** Clients and duration of the load run. */
const LOAD_CLIENTS = 50;
const LOAD_MS = 15_000;
/** Size of the tmpfs data dir in the full-disk scenario. */
const FULL_DISK_SIZE = "64m";

const binary = ensureBinary();
const cgroups = detectCgroups();
const root = process.getuid?.() === 0;

interface AllocStub {
  ID: string;
  Name: string;
  DesiredStatus: string;
  ClientStatus: string;
  JobVersion: number;
  TaskStates: Record<string, { Restarts: number }> | null;
}

interface Row {
  scenario: string;
  events: string;
  doubled: number;
  orphaned: number;
  lost: number;
  linesLost: number;
  restartsMiscounted: number;
  notes: string;
}

/** One agent with its own data dir, port and cgroup parent; everything it started is killed at the end. */
class ChaosAgent {
  readonly dir = mkdtempSync(join(tmpdir(), "drover-chaos-"));
  readonly dataDir = join(this.dir, "data");
  readonly startsFile = join(this.dir, "starts");
  readonly runId = `chaos-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly cgroupParent = `drover-chaos-${process.pid}-${Math.random().toString(36).slice(2, 6)}`;
  address = "";
  process: ChildProcess | undefined;
  private version = 0;

  async prepare(): Promise<void> {
    mkdirSync(this.dataDir, { recursive: true });
    const port = await freePort();
    this.address = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(this.dir, "agent.json"),
      JSON.stringify({
        data_dir: this.dataDir,
        ports: { http: port },
        log_level: "INFO",
        client: { cgroup_parent: this.cgroupParent, gc_max_allocs: 500 },
        plugin: { raw_exec: { config: { enabled: true } } },
      }),
    );
    writeFileSync(this.startsFile, "");
  }

  async start(): Promise<void> {
    const log = openSync(join(this.dir, "agent.log"), "a");
    this.process = spawnProcess({ argv: [binary, "agent", "-config", join(this.dir, "agent.json"), "-log-json"], env: process.env, stderr: log });
    closeSync(log);
    for (;;) {
      if ((await fetch(`${this.address}/v1/agent/health`).catch(() => null))?.ok) return;
      await sleep(20);
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.process?.kill(signal);
  }

  async killAndWait(): Promise<void> {
    this.kill("SIGKILL");
    await this.process?.exited;
  }

  /** Registers the job's next version: an env change, so every alloc is replaced. */
  async update(): Promise<void> {
    this.version++;
    await this.request("POST", "/v1/jobs", this.job());
  }

  private job(): unknown {
    const command = [
      `echo "$NOMAD_ALLOC_ID" >> ${this.startsFile}`,
      'i=0; while :; do i=$((i+1)); echo "$NOMAD_ALLOC_ID $i"; sleep 0.02; done',
    ].join("; ");
    return {
      Job: {
        ID: "chaos",
        Name: "chaos",
        Type: "service",
        Datacenters: ["dc1"],
        TaskGroups: [
          {
            Name: "g",
            Count: COUNT,
            RestartPolicy: { Attempts: 1000, Interval: 3600e9, Delay: 50e6, Mode: "fail" },
            // Every update is a deployment that replaces all allocs in one batch, each healthy once running.
            Update: { MaxParallel: COUNT, MinHealthyTime: 0, HealthyDeadline: 30e9, ProgressDeadline: 60e9 },
            EphemeralDisk: { SizeMB: 40 },
            Tasks: [
              {
                Name: "web",
                Driver: "raw_exec",
                Config: { command: "/bin/sh", args: ["-c", command] },
                Env: { CHAOS_RUN: this.runId, CHAOS_VERSION: String(this.version) },
                Resources: { CPU: 20, MemoryMB: 32 },
                LogConfig: { MaxFiles: 2, MaxFileSizeMB: 2 },
                KillTimeout: 200e6,
              },
            ],
          },
        ],
      },
    };
  }

  /** One registration of the next version, answered as it comes: its status. */
  async tryUpdate(): Promise<number> {
    this.version++;
    const res = await fetch(`${this.address}/v1/jobs`, { method: "POST", body: JSON.stringify(this.job()) });
    return res.status;
  }

  async request(method: string, path: string, body?: unknown): Promise<Response> {
    for (;;) {
      const res = await fetch(`${this.address}${path}`, { method, ...(body ? { body: JSON.stringify(body) } : {}) }).catch(() => null);
      if (res?.ok) return res;
      // The agent is restarting: try again.
      await sleep(50);
    }
  }

  /** Whether every task process that still runs is held by a live executor: launched or adopted there, as its log says. */
  heldByLiveExecutors(tasks: { pid: number; allocId: string }[]): boolean {
    const logs = executorPids(this).map((pid) => {
      try {
        const base = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).at(-1)!;
        return readFileSync(`${base}.log`, "utf8");
      } catch {
        return "";
      }
    });
    return tasks.every((task) => !isRunning(task.pid) || logs.some((log) => log.includes(`${task.allocId}/web: pid ${task.pid}`)));
  }

  async allocs(): Promise<AllocStub[]> {
    return (await (await this.request("GET", "/v1/job/chaos/allocations")).json()) as AllocStub[];
  }

  /** Task processes (the shells, not their `sleep` children), by alloc ID and name. */
  tasks(): { pid: number; allocId: string; name: string }[] {
    return pidsWithCmdline("NOMAD_ALLOC_ID")
      .map((pid) => ({ pid, env: processEnv(pid) }))
      .filter(({ env }) => env?.CHAOS_RUN === this.runId)
      .map(({ pid, env }) => ({ pid, allocId: env!.NOMAD_ALLOC_ID!, name: env!.NOMAD_ALLOC_NAME! }));
  }

  /** Waits until the newest version's allocs all run, each with exactly one process; false on timeout. */
  async converge(): Promise<boolean> {
    const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const wanted = (await this.allocs()).filter((alloc) => alloc.DesiredStatus === "run");
      const live = this.tasks();
      const settled =
        wanted.length === COUNT &&
        wanted.every((alloc) => alloc.ClientStatus === "running" && live.filter((task) => task.allocId === alloc.ID).length === 1) &&
        live.length === COUNT;
      if (settled) return true;
      await sleep(200);
    }
    return false;
  }

  /** Doubled, orphaned and lost, as the server and /proc see them now. */
  async judge(): Promise<Pick<Row, "doubled" | "orphaned" | "lost">> {
    const wanted = (await this.allocs()).filter((alloc) => alloc.DesiredStatus === "run" && !["complete", "failed", "lost"].includes(alloc.ClientStatus));
    const live = this.tasks();
    const byName = new Map<string, number>();
    for (const task of live) byName.set(task.name, (byName.get(task.name) ?? 0) + 1);
    return {
      doubled: [...byName.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0),
      orphaned: live.filter((task) => !wanted.some((alloc) => alloc.ID === task.allocId)).length,
      lost: wanted.filter((alloc) => !live.some((task) => task.allocId === alloc.ID)).length,
    };
  }

  /** Stops the job and waits for its allocs to finish; then counts starts against reported restarts and reads the logs. */
  async finish(): Promise<Pick<Row, "linesLost" | "restartsMiscounted"> & { leftAfterStop: number }> {
    const allocs = await this.allocs();
    await this.request("DELETE", "/v1/job/chaos");
    const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
    while (Date.now() < deadline && this.tasks().length > 0) await sleep(100);
    const leftAfterStop = this.tasks().length;
    // Let the last states land before they are compared.
    await sleep(500);
    const final = await this.allocs();
    const starts = readFileSync(this.startsFile, "utf8").split("\n").filter(Boolean);
    let restartsMiscounted = 0;
    for (const alloc of final) {
      const real = starts.filter((id) => id === alloc.ID).length;
      const reported = alloc.TaskStates?.web?.Restarts ?? 0;
      if (real > 0) restartsMiscounted += Math.abs(reported - (real - 1));
    }
    let linesLost = 0;
    for (const alloc of allocs) linesLost += this.linesLost(alloc.ID);
    return { linesLost, restartsMiscounted, leftAfterStop };
  }

  /** Gaps in each run's numbered lines: every run counts 1, 2, 3, ... from its start. */
  private linesLost(allocId: string): number {
    const logs = join(this.dataDir, "alloc", allocId, "alloc", "logs");
    if (!existsSync(logs)) return 0;
    const files = readdirSync(logs)
      .filter((name) => /^web\.stdout\.\d+$/.test(name))
      .sort((a, b) => Number(a.split(".").at(-1)) - Number(b.split(".").at(-1)));
    // Rotation keeps only the newest files, so the first run seen may start past 1.
    let expected: number | undefined;
    let lost = 0;
    for (const file of files) {
      for (const line of readFileSync(join(logs, file), "utf8").split("\n")) {
        const n = Number(line.split(" ")[1]);
        if (!line || !Number.isInteger(n)) continue;
        if (n === 1) expected = 1;
        if (expected !== undefined && n > expected) lost += n - expected;
        expected = n + 1;
      }
    }
    return lost;
  }

  cleanUp(): void {
    this.kill("SIGKILL");
    killPids(this.tasks().map((task) => task.pid));
    killPids(pidsWithCmdline(this.dataDir));
    for (const dir of parentCgroupDirs(cgroups, this.cgroupParent)) {
      if (!existsSync(dir)) continue;
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        killPids(readProcs(join(dir, entry.name)));
        removeDir(join(dir, entry.name));
      }
      removeDir(dir);
    }
    detachMountsUnder(this.dir);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `stopped`: the scenario stopped the job itself; the judge then only checks that nothing is left. */
type Scenario = (agent: ChaosAgent) => Promise<{ events: string; notes?: string; stopped?: boolean }>;

const random = (max: number) => Math.floor(Math.random() * max);

/** The log pump, found by its role and this agent's data dir. */
function logmonPid(agent: ChaosAgent): number | undefined {
  return pidsWithCmdline(join(agent.dataDir, "logmon")).find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("logmon"));
}

/** The executors (not the host reaper, which names the same run dir). */
function executorPids(agent: ChaosAgent): number[] {
  return pidsWithCmdline(join(agent.dataDir, "run")).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("\0executor\0"));
}

const SCENARIOS: Record<string, Scenario> = {
  "agent SIGKILL storm during updates": async (agent) => {
    for (let i = 0; i < STORM_KILLS; i++) {
      await agent.update();
      await sleep(random(STORM_MAX_DELAY_MS));
      await agent.killAndWait();
      await agent.start();
    }
    return { events: `${STORM_KILLS} updates, each cut by SIGKILL` };
  },
  "executor SIGKILL": async (agent) => {
    // Executors run under the host reaper: a dead executor's tasks become the reaper's children and
    // another executor adopts them, so every task must keep running with its pid (none restarted).
    let killed = 0;
    let restarted = 0;
    const starts = () => readFileSync(agent.startsFile, "utf8").split("\n").filter(Boolean).length;
    for (let i = 0; i < EXECUTOR_KILLS; i++) {
      const executors = executorPids(agent);
      if (executors.length === 0) continue;
      const executor = executors[random(executors.length)]!;
      const tasks = agent.tasks();
      const startsBefore = starts();
      killPids([executor]);
      killed++;
      const deadline = Date.now() + CONVERGE_TIMEOUT_MS;
      while (isRunning(executor) && Date.now() < deadline) await sleep(20);
      while (Date.now() < deadline && !agent.heldByLiveExecutors(tasks)) await sleep(50);
      await agent.converge();
      restarted += tasks.filter((task) => !isRunning(task.pid)).length + (starts() - startsBefore);
    }
    return { events: `${killed} executors killed`, notes: restarted > 0 ? `tasks restarted after an executor died: ${restarted}` : "" };
  },
  "log pump SIGKILL": async (agent) => {
    for (let i = 0; i < LOGMON_KILLS; i++) {
      const pid = logmonPid(agent);
      if (pid) killPids([pid]);
      await sleep(300);
    }
    return { events: `${LOGMON_KILLS} log pump kills` };
  },
  "agent SIGSTOP": async (agent) => {
    agent.kill("SIGSTOP");
    await sleep(SIGSTOP_MS);
    agent.kill("SIGCONT");
    await agent.update();
    return { events: `stopped ${SIGSTOP_MS / 1000} s, then an update` };
  },
  "load run with an update": async (agent) => {
    const latencies: number[] = [];
    let errors = 0;
    const end = Date.now() + LOAD_MS;
    const client = async () => {
      while (Date.now() < end) {
        const started = performance.now();
        const res = await fetch(`${agent.address}/v1/allocations`).catch(() => null);
        if (!res?.ok) errors++;
        else await res.arrayBuffer();
        latencies.push(performance.now() - started);
      }
    };
    const clients = Array.from({ length: LOAD_CLIENTS }, client);
    await sleep(LOAD_MS / 3);
    await agent.update();
    await Promise.all(clients);
    return {
      events: `${LOAD_CLIENTS} clients for ${LOAD_MS / 1000} s, one update`,
      notes: `${latencies.length} requests, p99 ${percentile(latencies, 99).toFixed(0)} ms, ${errors} errors`,
    };
  },
  "full state disk": async (agent) => {
    if (!root) return { events: "skipped", notes: "needs root for a tmpfs" };
    // Something fills the data dir's disk outside any alloc dir (beyond an ephemeral_disk limit's reach).
    const filler = join(agent.dataDir, "filler");
    mkdirSync(filler);
    const fill = spawnProcess({ argv: ["sh", "-c", `i=0; while :; do i=$((i+1)); head -c 1048576 /dev/zero > ${filler}/f$i || sleep 0.05; done`], env: {} });
    while ((await fetch(`${agent.address}/v1/agent/health`)).ok) await sleep(100);
    const refused = await agent.tryUpdate();
    // The job stop is made while the disk is still full (finish() stops the job), then space returns.
    const stop = await fetch(`${agent.address}/v1/job/chaos`, { method: "DELETE" });
    fill.kill("SIGKILL");
    await fill.exited;
    rmSync(filler, { recursive: true, force: true });
    return { events: "data dir disk filled; an update, then a stop", notes: `update: ${refused}, stop: ${stop.status}`, stopped: true };
  },
};

async function runScenario(name: string, scenario: Scenario): Promise<Row> {
  const agent = new ChaosAgent();
  try {
    await agent.prepare();
    if (name === "full state disk" && root) {
      const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${FULL_DISK_SIZE}`, "tmpfs", agent.dataDir]);
      if (mounted.exitCode !== 0) throw new Error(`mount failed: ${mounted.stderr.toString()}`);
    }
    await agent.start();
    await agent.update();
    await agent.converge();
    const { events, notes = "", stopped = false } = await scenario(agent);
    const converged = stopped || (await agent.converge());
    // A scenario that stopped the job is judged by what is left after the stop (finish()).
    const judged = stopped ? { doubled: 0, orphaned: 0, lost: 0 } : await agent.judge();
    const finished = await agent.finish();
    return {
      scenario: name,
      events,
      ...judged,
      orphaned: judged.orphaned + finished.leftAfterStop,
      linesLost: finished.linesLost,
      restartsMiscounted: finished.restartsMiscounted,
      notes: [notes, converged ? "" : "did not converge"].filter(Boolean).join("; "),
    };
  } finally {
    agent.cleanUp();
  }
}

const filter = process.argv[2];
const rows: Row[] = [];
for (const [name, scenario] of Object.entries(SCENARIOS)) {
  if (filter && !name.includes(filter)) continue;
  console.error(`chaos: ${name} ...`);
  rows.push(await runScenario(name, scenario));
}
printTable(
  `Chaos (${COUNT} tasks per scenario, compiled agent; every count should be 0)`,
  ["scenario", "what happened", "tasks doubled", "orphaned", "lost", "lines lost", "restarts miscounted", "notes"],
  rows.map((row) => [row.scenario, row.events, String(row.doubled), String(row.orphaned), String(row.lost), String(row.linesLost), String(row.restartsMiscounted), row.notes]),
);
console.log(machineLine());
const bad = rows.filter((row) => row.doubled + row.orphaned + row.lost + row.linesLost + row.restartsMiscounted > 0 || row.notes.includes("did not converge") || row.notes.includes("restarted"));
process.exit(bad.length > 0 ? 1 : 0);
