/**
 * How long executors take to end N tasks at once, split over executors of
 * `per` tasks each: the executor's side of a job's stop (bench/scale.ts's
 * "stop" column includes the agent's), without an agent.
 *
 *   bun bench/executor-stop.ts [N] [per ...]     (default: 128 tasks, 16 and 64 per executor)
 *   DROVER_BENCH_BINARY=path     another drover binary for the executors (an older build)
 *
 * Each run starts the executors (the compiled dist/drover), launches N
 * `sleep` tasks in cgroups, then sends every task `shutdown` at once and
 * times until every answer is in (each answer comes after the exit file is
 * durable and the cgroup removed). Also the executors' CPU seconds over the stop.
 * Needs root and cgroups, like the tasks the agent runs.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startExecutor, type StartedExecutor } from "../src/executor/client.ts";
import { taskCgroupPaths, parentCgroupDirs } from "../src/cgroups/paths.ts";
import { removeDir } from "../src/cgroups/files.ts";
import type { LaunchRequest } from "../src/executor/protocol.ts";
import { capabilities } from "../test/helpers/index.ts";

const SHUTDOWN_GRACE_MS = 5_000;
const CALL_TIMEOUT_MS = 30_000;
const CLOCK_TICKS_PER_S = 100;

const args = process.argv.slice(2).map(Number);
const n = args[0] ?? 128;
const pers = args.length > 1 ? args.slice(1) : [16, 64];
const binary = process.env.DROVER_BENCH_BINARY ?? join(import.meta.dir, "../dist/drover");

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

async function run(per: number): Promise<{ stopS: number; cpuS: number }> {
  const dir = mkdtempSync(join(tmpdir(), "drover-exstop-"));
  const parent = `drover-exstop-${process.pid}-${per}`;
  const executors: StartedExecutor[] = [];
  try {
    const launched: { executor: StartedExecutor; key: string }[] = [];
    for (let i = 0; i < n; i += per) executors.push(await startExecutor({ runDir: dir, drover: [binary] }));
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const executor = executors[Math.floor(i / per)]!;
        const allocId = `a${i}-${Math.random().toString(36).slice(2, 8)}`;
        const request: LaunchRequest & { key: string } = {
          key: `k${i}`,
          allocId,
          taskName: "task",
          argv: ["/bin/sleep", "1000"],
          env: { PATH: "/usr/bin:/bin" },
          cwd: dir,
          stdoutPath: join(dir, `${allocId}.stdout`),
          stderrPath: join(dir, `${allocId}.stderr`),
          resources: { cpuMhz: 100, memoryMb: 64, memoryMaxMb: 0, pidsLimit: 0 },
          cgroup: taskCgroupPaths(capabilities.cgroups, parent, allocId, "task"),
          mhzPerCore: 2000,
        };
        await executor.connection.call("launch", request, CALL_TIMEOUT_MS);
        launched.push({ executor, key: request.key });
      }),
    );
    const cpuBefore = executors.reduce((sum, e) => sum + cpuSeconds(e.pid), 0);
    const started = performance.now();
    await Promise.all(launched.map(({ executor, key }) => executor.connection.call("shutdown", { key, signal: "SIGINT", graceMs: SHUTDOWN_GRACE_MS }, CALL_TIMEOUT_MS)));
    const stopS = (performance.now() - started) / 1000;
    const cpuS = executors.reduce((sum, e) => sum + cpuSeconds(e.pid), 0) - cpuBefore;
    return { stopS, cpuS };
  } finally {
    for (const executor of executors) {
      await executor.connection.call("destroy", {}, CALL_TIMEOUT_MS).catch(() => undefined);
      executor.connection.close();
    }
    for (const cgroupDir of parentCgroupDirs(capabilities.cgroups, parent)) {
      try {
        removeDir(cgroupDir);
      } catch {
        // Already gone, or the host has no such hierarchy.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`${n} tasks; load ${readFileSync("/proc/loadavg", "utf8").split(" ")[0]}`);
for (const per of pers) {
  const { stopS, cpuS } = await run(per);
  console.log(`${per} per executor: stop ${stopS.toFixed(3)} s, executors' CPU ${cpuS.toFixed(2)} s`);
}
