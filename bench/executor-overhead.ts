/**
 * Memory per task: start N `sleep` tasks through the raw_exec driver with the
 * COMPILED binary's executors, then sum the PSS (/proc/PID/smaps_rollup) of
 * every drover helper process (the executors and the one logmon pumping all
 * tasks' FIFOs) and divide by N, after a few rounds of stats reads. Twice in
 * the same run: one executor per task (tasks_per_executor = 1, a process per
 * task), and the default sharing; with the CPU the executors used to start
 * and launch, per task. The agent (this script) is not counted. The same
 * again with the helpers on Deno (`deno run -A src/main.ts executor ...`).
 * Beside them in the same run: the floor of a helper on each runtime (a bare
 * listener after one GC, one per task: compiled Bun, `deno run`), runit's
 * runsv supervising the same sleeps (one runsv per service), and supervisord
 * (one process for all) when installed.
 * Nomad 0.12, pm2, supervisord and runit anchors are figures quoted by the
 * issue, measured earlier on this kind of machine.
 *
 *   bun bench/executor-overhead.ts [tasks]
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { harnessTask } from "../test/drivers/harness.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { descendants } from "../src/stats/process.ts";
import { RawExecDriver } from "../src/drivers/raw-exec.ts";
import { IDLE_ROLE_ENGINE_ENV, spawnProcess, spawnSelf, type ChildProcess } from "../src/runtime/spawn.ts";
import { LogmonClient } from "../src/client/logmon/client.ts";
import { createTaskFifos } from "../src/log-layout/fifo.ts";
import { LogmonSupervisor } from "../src/client/logmon/supervisor.ts";
import { DENO, droverRuntimes, type DroverRuntime } from "../test/helpers/runtimes.ts";
import { cpuSeconds, machineLine, memoryOf, printTable, type ProcessMemory } from "./lib.ts";
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../src/lib/log-config.ts";
import { DEFAULT_TASKS_PER_EXECUTOR } from "../src/lib/executor-sharing.ts";

const TASKS = Number(process.argv[2] ?? 50);
/** Time for every helper to reach its idle state (launch work done, heap settled). */
const SETTLE_MS = 3_000;
/** Stats calls per task before measuring, one second apart, as the agent's sampling makes them. */
const STATS_ROUNDS = 3;
const MIB = 1024 * 1024;

type Pss = Pick<ProcessMemory, "pss" | "anon" | "file">;

function perTask(pids: readonly number[], tasks: number): Pss {
  const total = pids.map(memoryOf).reduce((sum, p) => ({ pss: sum.pss + p.pss, anon: sum.anon + p.anon, file: sum.file + p.file }), { pss: 0, anon: 0, file: 0 });
  return { pss: total.pss / tasks / MIB, anon: total.anon / tasks / MIB, file: total.file / tasks / MIB };
}

const which = (name: string) => {
  const result = Bun.spawnSync(["sh", "-c", `command -v ${name}`], { stdout: "pipe" });
  return result.exitCode === 0 ? result.stdout.toString().trim() : null;
};

interface DroverFigures {
  executors: Pss;
  logmon: Pss;
  /** Executor processes the tasks ran under. */
  processes: number;
  /** CPU the executors spent to start and launch, per task, ms. */
  startCpuMs: number;
}

/**
 * The agent's helpers as it runs them, on `runtime`: executors holding up to
 * `tasksPerExecutor` tasks each (1: one per task, the topology before shared
 * executors), and one logmon for all of them pumping every task's FIFOs.
 */
async function measureDrover(parent: string, runtime: DroverRuntime, tasksPerExecutor: number): Promise<DroverFigures> {
  const dir = join(parent, `${runtime.name}-${tasksPerExecutor}`);
  const driver = new RawExecDriver({ enabled: true, runDir: join(dir, "run"), cgroups: detectCgroups(), mhzPerCore: 1000, drover: runtime.argv, tasksPerExecutor });
  const stateDir = join(dir, "logmon");
  mkdirSync(stateDir, { recursive: true });
  const socketPath = join(dir, "logmon.sock");
  const logmon = spawnSelf("logmon", ["--state-dir", stateDir, "--socket", socketPath], { drover: runtime.argv, env: {}, detached: true });
  const supervisor = new LogmonSupervisor({ stateDir, socketPath });
  const logs = new LogmonClient(supervisor);
  const ids: string[] = [];
  const executors = new Set<number>();
  const cgroupParent = `drover-bench-${process.pid}`;
  try {
    // Attach to the logmon started above, not one the supervisor would start from source.
    for (let waited = 0; !existsSync(socketPath); waited += 10) {
      if (waited > 30_000) throw new Error(`the logmon did not listen on ${socketPath}`);
      await Bun.sleep(10);
    }
    await supervisor.start();
    const answering = await logs.version();
    if (answering.pid !== logmon.pid) throw new Error(`logmon ${answering.pid} answered, not the one started here (${logmon.pid})`);
    for (let i = 0; i < TASKS; i++) {
      const task = harnessTask(dir, cgroupParent, i, ["sleep", "3600"]);
      const logDir = join(task.cwd, "logs");
      const fifos = createTaskFifos(logDir, task.taskName);
      const id = `${task.allocId}/${task.taskName}`;
      await logs.register({ id, logDir, taskName: task.taskName, maxFiles: DEFAULT_LOG_MAX_FILES, maxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB });
      const { handle } = await driver.startTask({ ...task, stdoutPath: fifos.stdout, stderrPath: fifos.stderr });
      ids.push(id);
      executors.add(handle.executor.pid);
    }
    const startCpuMs = [...executors].reduce((sum, pid) => sum + cpuSeconds(pid) * 1000, 0) / TASKS;
    // A dashboard reading every task's stats each second: measure the helpers in that steady state.
    for (let round = 0; round < STATS_ROUNDS; round++) {
      await driver.taskStatsBatch(ids);
      await Bun.sleep(1_000);
    }
    await Bun.sleep(SETTLE_MS);
    return { executors: perTask([...executors], TASKS), logmon: perTask([logmon.pid], TASKS), processes: executors.size, startCpuMs };
  } finally {
    for (const id of ids) {
      await driver.destroyTask(id, true);
      await logs.deregister(id);
    }
    supervisor.stop();
    logmon.kill("SIGTERM");
    await logmon.exited;
    for (const parentDir of parentCgroupDirs(detectCgroups(), cgroupParent)) removeDir(parentDir);
  }
}

/** N copies of `argv` (which gets a socket path), settled, measured, killed. */
async function measureCopies(dir: string, name: string, argv: readonly string[]): Promise<Pss> {
  // The executors' own engine settings, so the floor is what an executor could be at best.
  const copies = Array.from({ length: TASKS }, (_, i) => Bun.spawn([...argv, join(dir, `${name}-${i}.sock`)], { env: { ...IDLE_ROLE_ENGINE_ENV } }));
  try {
    await Bun.sleep(SETTLE_MS);
    return perTask(
      copies.map((child) => child.pid),
      TASKS,
    );
  } finally {
    for (const child of copies) child.kill(9);
  }
}

/** A floor program at `path`: `listen` on the socket named by its argument, make garbage (every long-lived process has), `collect`, idle. */
function writeFloor(path: string, listen: string, collect = ""): string {
  const garbage = "let junk: object[] = []; for (let i = 0; i < 200000; i++) { junk.push({ i }); if (junk.length > 1000) junk = []; }";
  writeFileSync(path, `${listen}\n${garbage}\n${collect} setInterval(() => {}, 1 << 30);\n`);
  return path;
}

/**
 * The floor of any Bun-based helper: the smallest compiled Bun program that
 * listens on a unix socket and has run one garbage collection (every
 * long-lived process does), N copies sharing their binary like executors do,
 * with the executors' engine settings.
 */
async function measureFloor(dir: string): Promise<Pss> {
  const source = writeFloor(join(dir, "floor.ts"), "Bun.listen({ unix: process.argv[2]!, socket: { data() {} } });", "Bun.gc(true);");
  const outfile = join(dir, "floor");
  const built = await Bun.build({ entrypoints: [source], compile: { outfile }, bytecode: true, format: "esm", minify: true });
  if (!built.success) throw new Error("building the floor program failed");
  return measureCopies(dir, "floor", [outfile]);
}

/** The same floor on Deno: `deno run` of a bare unix listener after one GC's worth of garbage. */
async function measureDenoFloor(dir: string): Promise<Pss> {
  const source = writeFloor(join(dir, "floor-deno.ts"), 'Deno.listen({ transport: "unix", path: Deno.args[0]! });');
  return measureCopies(dir, "floor-deno", [DENO, "run", "-A", source]);
}

async function measureRunsv(dir: string, runsv: string): Promise<Pss> {
  const supervisors: ChildProcess[] = [];
  try {
    for (let i = 0; i < TASKS; i++) {
      const service = join(dir, `sv-${i}`);
      mkdirSync(service, { recursive: true });
      writeFileSync(join(service, "run"), "#!/bin/sh\nexec sleep 3600\n", { mode: 0o755 });
      supervisors.push(spawnProcess({ argv: [runsv, service], env: { PATH: "/usr/bin:/bin" } }));
    }
    await Bun.sleep(SETTLE_MS);
    return perTask(
      supervisors.map((child) => child.pid),
      TASKS,
    );
  } finally {
    const sleeps = supervisors.flatMap((child) => descendants(child.pid));
    for (const child of supervisors) child.kill("SIGKILL");
    for (const pid of sleeps) process.kill(pid, "SIGKILL");
  }
}

async function measureSupervisord(dir: string, supervisord: string): Promise<Pss> {
  const programs = Array.from({ length: TASKS }, (_, i) => `[program:sleep${i}]\ncommand=sleep 3600\nautorestart=false\n`).join("\n");
  const config = join(dir, "supervisord.conf");
  writeFileSync(config, `[supervisord]\nnodaemon=true\nlogfile=${join(dir, "supervisord.log")}\npidfile=${join(dir, "supervisord.pid")}\nchildlogdir=${dir}\n\n${programs}`);
  const daemon = spawnProcess({ argv: [supervisord, "-c", config], env: { PATH: "/usr/bin:/bin" } });
  try {
    await Bun.sleep(SETTLE_MS + 2_000);
    return perTask([daemon.pid], TASKS);
  } finally {
    const sleeps = descendants(daemon.pid);
    daemon.kill("SIGKILL");
    for (const pid of sleeps) process.kill(pid, "SIGKILL");
  }
}

const dir = mkdtempSync(join(tmpdir(), "drover-bench-"));
const rows: (string | number)[][] = [];
try {
  const sum = (a: Pss, b: Pss): Pss => ({ pss: a.pss + b.pss, anon: a.anon + b.anon, file: a.file + b.file });
  for (const runtime of droverRuntimes()) {
    for (const tasksPerExecutor of [1, DEFAULT_TASKS_PER_EXECUTOR]) {
      const { executors, logmon, processes, startCpuMs } = await measureDrover(dir, runtime, tasksPerExecutor);
      const drover = sum(executors, logmon);
      const label = runtime.name === "bun" ? "Bun, compiled" : "Deno";
      const topology = tasksPerExecutor === 1 ? "one executor per task" : `${tasksPerExecutor} tasks per executor (the default)`;
      rows.push([`drover on ${label}, ${topology}: executors + logmon`, drover.pss, drover.anon, drover.file, startCpuMs]);
      rows.push([`  of which ${processes} executors`, executors.pss, executors.anon, executors.file, ""]);
      rows.push(["  of which the logmon, one for all", logmon.pss, logmon.anon, logmon.file, ""]);
    }
  }
  const floor = await measureFloor(dir);
  rows.push(["floor: bare compiled Bun listener after one GC, one per task", floor.pss, floor.anon, floor.file, ""]);
  const denoFloor = await measureDenoFloor(dir);
  rows.push(["floor: bare `deno run` listener, one per task", denoFloor.pss, denoFloor.anon, denoFloor.file, ""]);
  const runsv = which("runsv");
  if (runsv) {
    const peer = await measureRunsv(dir, runsv);
    rows.push(["runit runsv, one per service (peer, same run)", peer.pss, peer.anon, peer.file, ""]);
  }
  const supervisord = which("supervisord");
  if (supervisord) {
    const peer = await measureSupervisord(dir, supervisord);
    rows.push(["supervisord, one for all (peer, same run)", peer.pss, peer.anon, peer.file, ""]);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
rows.push(["Nomad 0.12 executor + logmon (quoted anchor)", 7.2, "", "", ""]);
rows.push(["pm2 (quoted anchor)", 2.9, "", "", ""]);
rows.push(["supervisord (quoted anchor)", 1.2, "", "", ""]);
rows.push(["runit (quoted anchor)", 0.24, "", "", ""]);
printTable(
  `Supervisor memory per task (${TASKS} sleep tasks; PSS from /proc/PID/smaps_rollup; goal: drover <= 3.0 MiB)`,
  ["supervisor", "PSS MiB/task", "anon MiB/task", "file MiB/task", "start CPU ms/task"],
  rows,
);
console.log(machineLine());
