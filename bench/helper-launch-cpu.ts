/**
 * What the helpers spend to start N tasks, without the agent: the CPU seconds
 * of the executors (one per TASKS_PER_EXECUTOR tasks) launching N raw_exec
 * `sleep`s into their cgroups, and of the one log pump registering their 2N
 * FIFOs, as the agent asks (every task's register and launch sent at once).
 * bench/scale.ts measures the same helpers beside the agent; here nothing
 * else competes, so a change to the per-task path shows up alone. The
 * registrations go through this checkout's logmon client, whichever build's
 * logmon answers them.
 *
 *   bun bench/helper-launch-cpu.ts [--baseline-binary PATH] [--rounds R] [N]
 *
 *   --baseline-binary PATH   an older build measured in the same rounds, before this
 *                            one in each (interleaved, so both see the same load)
 *   DROVER_BENCH_PROFILE=dir runs this build's helpers from source under Bun's
 *                            --cpu-prof-md, writing their profiles there (wall-clock
 *                            samples: time blocked in a system call counts too)
 *   DROVER_BENCH_DIR=dir     where the tasks' dirs go (default the temp dir): the agent puts
 *                            them on a fresh ext4 image per alloc, where a file's creation is
 *                            cheap; on a busy ext4 without a journal (this machine's root)
 *                            each log file's creation scans for an inode not recently
 *                            deleted, which then dominates the logmon's figure; /dev/shm
 *                            is nearer the agent's case
 *   DROVER_BENCH_PERF=prefix `perf record -g` on this build's executors and logmon while
 *                            they start the tasks: <prefix>-executors.data, -logmon.data
 *
 * Every process it starts is killed by pid at the end, the cgroups removed.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { taskCgroupPaths } from "../src/cgroups/paths.ts";
import { LogmonClient } from "../src/client/logmon/client.ts";
import { LogmonSupervisor } from "../src/client/logmon/supervisor.ts";
import { startExecutor, type StartedExecutor } from "../src/executor/client.ts";
import type { LaunchRequest } from "../src/executor/protocol.ts";
import { createTaskFifos } from "../src/log-layout/fifo.ts";
import { spawnProcess, type ChildProcess } from "../src/runtime/spawn.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { removeCgroupParent } from "../test/helpers/cgroups.ts";
import { killPids, sleep } from "../test/helpers/index.ts";
import { cpuSeconds, machineLine, median, printTable } from "./lib.ts";

const TASKS_PER_EXECUTOR = 64;
/** Tasks the agent starts per turn of its event loop. */
const SLICE = 16;
const DEFAULT_N = 500;
const DEFAULT_ROUNDS = 3;
/** How long a helper may take to exit once told to. */
const EXIT_WAIT_MS = 10_000;
/** Variables as many as a task runner gives a raw_exec task (NOMAD_* and the rest). */
const TASK_ENV_VARS = 40;

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  if (at < 0) return undefined;
  const value = process.argv[at + 1];
  if (value === undefined) throw new Error(`${name} needs a value`);
  return value;
}
const baselineBinary = flag("--baseline-binary");
const rounds = Number(flag("--rounds") ?? DEFAULT_ROUNDS);
const flagValues = new Set(["--baseline-binary", "--rounds"].flatMap((name) => [name, flag(name)]));
const n = Number(process.argv.slice(2).find((arg) => !flagValues.has(arg)) ?? DEFAULT_N);
const profileDir = process.env.DROVER_BENCH_PROFILE ? resolve(process.env.DROVER_BENCH_PROFILE) : undefined;
const perfPrefix = process.env.DROVER_BENCH_PERF ? resolve(process.env.DROVER_BENCH_PERF) : undefined;
/** How long perf is given to attach before the measured start (it prints nothing when it has). */
const PERF_ATTACH_MS = 1_000;

const cgroups = detectCgroups();
const root = mkdtempSync(join(process.env.DROVER_BENCH_DIR ?? tmpdir(), "helper-cpu-"));
const started = new Set<number>();

interface Result {
  executorsUs: number;
  logmonUs: number;
  wallS: number;
}

function taskEnv(i: number): Record<string, string> {
  const env: Record<string, string> = { PATH: "/usr/bin:/bin" };
  for (let v = 0; v < TASK_ENV_VARS; v++) env[`NOMAD_VAR_${v}`] = `value-${i}-${v}-${"x".repeat(20)}`;
  return env;
}

async function measure(build: string, drover: readonly string[], round: number): Promise<Result> {
  const dir = join(root, `${build}-${round}`);
  const runDir = join(dir, "run");
  const parent = `drover-helper-cpu-${process.pid}-${build}-${round}`;
  const supervisor = new LogmonSupervisor({ stateDir: join(dir, "logmon"), drover });
  const client = new LogmonClient(supervisor);
  const executors: StartedExecutor[] = [];
  try {
    // The logmon starts with the first call, as with the agent's first task.
    await supervisor.call("version", {});
    if (supervisor.logmonPid) started.add(supervisor.logmonPid);
    for (let e = 0; e < Math.ceil(n / TASKS_PER_EXECUTOR); e++) {
      const executor = await startExecutor({ runDir, drover });
      started.add(executor.pid);
      executors.push(executor);
    }
    const tasks = Array.from({ length: n }, (_, i) => {
      const allocId = `${String(i).padStart(8, "0")}-0000-0000-0000-${String(round).padStart(12, "0")}`;
      const taskDir = join(dir, "alloc", allocId, "t");
      mkdirSync(taskDir, { recursive: true });
      const logDir = join(dir, "alloc", allocId, "alloc", "logs");
      const fifos = createTaskFifos(logDir, "t");
      const request: LaunchRequest & { key: string } = {
        key: `${allocId.slice(0, 8)}.t.${i}`,
        allocId,
        taskName: "t",
        argv: ["sleep", "3600"],
        env: taskEnv(i),
        cwd: taskDir,
        stdoutPath: fifos.stdout,
        stderrPath: fifos.stderr,
        resources: { cpuMhz: 100, memoryMb: 16, memoryMaxMb: 0, pidsLimit: 0 },
        cgroup: cgroups.mode === "none" ? null : taskCgroupPaths(cgroups, parent, allocId, "t", "accounting"),
        mhzPerCore: 2000,
      };
      return { id: `${allocId}/t`, logDir, request };
    });
    const executorsCpu = () => executors.reduce((sum, each) => sum + cpuSeconds(each.pid), 0);
    const logmonPid = supervisor.logmonPid!;
    const executorsBefore = executorsCpu();
    const logmonBefore = cpuSeconds(logmonPid);
    const perf = perfPrefix && build === "this" ? await recordPerf(executors.map((each) => each.pid), logmonPid) : [];
    const t0 = performance.now();
    // As the agent starts them: slices of SLICE tasks a turn, each registered through the agent's
    // logmon client (which batches what comes while a registration is under way), then launched.
    const starts: Promise<unknown>[] = [];
    for (let at = 0; at < n; at += SLICE) {
      for (const [i, { id, logDir, request }] of tasks.slice(at, at + SLICE).entries()) {
        starts.push(
          client
            .register({ id, logDir, taskName: "t", maxFiles: 2, maxFileSizeMB: 1 })
            .then(() => executors[Math.floor((at + i) / TASKS_PER_EXECUTOR)]!.connection.call("launch", request)),
        );
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(starts);
    const wallS = (performance.now() - t0) / 1000;
    const executorsUs = ((executorsCpu() - executorsBefore) / n) * 1e6;
    const logmonUs = ((cpuSeconds(logmonPid) - logmonBefore) / n) * 1e6;
    for (const recorder of perf) recorder.kill("SIGINT");
    await Promise.all(perf.map((recorder) => recorder.exited));
    return { executorsUs, logmonUs, wallS };
  } finally {
    await Promise.all(executors.map((each) => each.connection.call("destroy", {}, EXIT_WAIT_MS).catch(() => undefined)));
    for (const each of executors) each.connection.close();
    await supervisor.terminate().catch(() => undefined);
    await removeCgroupParent(parent);
  }
}

async function recordPerf(executors: readonly number[], logmon: number): Promise<ChildProcess[]> {
  const record = (what: string, pids: readonly number[]) =>
    spawnProcess({ argv: ["perf", "record", "-g", "-o", `${perfPrefix}-${what}.data`, "-p", pids.join(",")], env: process.env as Record<string, string>, cwd: root, stdout: "ignore", stderr: "ignore" });
  const recorders = [record("executors", executors), record("logmon", [logmon])];
  for (const recorder of recorders) started.add(recorder.pid);
  await sleep(PERF_ATTACH_MS);
  return recorders;
}

const thisBinary = ensureBinary();
const thisDrover = profileDir ? [process.execPath, "--cpu-prof-md", `--cpu-prof-dir=${profileDir}`, resolve(import.meta.dir, "../src/main.ts")] : [thisBinary];
const builds: [string, readonly string[]][] = [...(baselineBinary ? [["baseline", [baselineBinary]] as [string, string[]]] : []), ["this", thisDrover]];
const results = new Map<string, Result[]>(builds.map(([build]) => [build, []]));
const loads: number[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    for (const [build, drover] of builds) {
      loads.push(loadavg()[0]!);
      results.get(build)!.push(await measure(build, drover, round));
    }
  }
} finally {
  killPids([...started]);
  rmSync(root, { recursive: true, force: true });
}

printTable(
  `Helpers' CPU to start ${n} raw_exec tasks (${TASKS_PER_EXECUTOR} per executor), median of ${rounds} interleaved rounds`,
  ["build", "executors µs/task", "logmon µs/task", "register + launch all s"],
  builds.map(([build]) => {
    const rows = results.get(build)!;
    return [build, median(rows.map((r) => r.executorsUs)).toFixed(0), median(rows.map((r) => r.logmonUs)).toFixed(0), median(rows.map((r) => r.wallS)).toFixed(2)];
  }),
);
console.log(`load average (1 min) during the rounds: ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
console.log(machineLine());
