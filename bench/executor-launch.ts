/**
 * Launch latency: from the driver's startTask (a new executor from the
 * COMPILED binary, then the launch request) to the task running, p50/p99
 * over N launches, beside a plain spawn of the same command in the same run
 * (the floor: what starting the process costs with no supervisor at all).
 * The middle row is the launch request alone, into executors already running.
 *
 *   bun bench/executor-launch.ts [launches]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs, taskCgroupPaths } from "../src/cgroups/paths.ts";
import { RawExecDriver } from "../src/drivers/raw-exec.ts";
import { startExecutor } from "../src/executor/client.ts";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { harnessTask } from "../test/drivers/harness.ts";
import { machineLine, median, percentile, printTable } from "./lib.ts";

const LAUNCHES = Number(process.argv[2] ?? 100);
const COMMAND = ["sleep", "3600"];
const binary = ensureBinary();
const dir = mkdtempSync(join(tmpdir(), "drover-bench-"));
const cgroupParent = `drover-bench-${process.pid}`;
const layout = detectCgroups();

async function plainSpawn(): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < LAUNCHES; i++) {
    const started = performance.now();
    const child = spawnProcess({ argv: ["/usr/bin/sleep", "3600"], env: { PATH: "/usr/bin:/bin" } });
    samples.push(performance.now() - started);
    child.kill("SIGKILL");
    await child.exited;
  }
  return samples;
}

async function driverStart(): Promise<number[]> {
  const driver = new RawExecDriver({ enabled: true, runDir: join(dir, "run"), cgroups: layout, mhzPerCore: 1000, drover: [binary] });
  const samples: number[] = [];
  for (let i = 0; i < LAUNCHES; i++) {
    const config = harnessTask(dir, cgroupParent, i, COMMAND);
    const started = performance.now();
    const { handle } = await driver.startTask(config);
    samples.push(performance.now() - started);
    await driver.destroyTask(`${handle.allocId}/${handle.taskName}`, true);
  }
  return samples;
}

/** The launch request alone, into an executor already listening. */
async function launchOnly(): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < LAUNCHES; i++) {
    const config = harnessTask(dir, cgroupParent, LAUNCHES + i, COMMAND);
    const executor = await startExecutor({ runDir: join(dir, "run"), allocId: config.allocId, taskName: config.taskName, drover: [binary] });
    const started = performance.now();
    await executor.connection.call("launch", {
      ...config,
      argv: COMMAND,
      resources: { ...config.resources, memoryMaxMb: 0, pidsLimit: 0 },
      cgroup: layout.mode === "none" ? null : taskCgroupPaths(layout, cgroupParent, config.allocId, config.taskName),
      mhzPerCore: 1000,
    });
    samples.push(performance.now() - started);
    await executor.connection.call("destroy", {});
    executor.connection.close();
  }
  return samples;
}

try {
  const plain = await plainSpawn();
  const launch = await launchOnly();
  const full = await driverStart();
  const row = (name: string, samples: number[]) => [name, median(samples), percentile(samples, 99)];
  printTable(
    `Launch latency (${LAUNCHES} launches of \`${COMMAND.join(" ")}\`; cgroups: ${layout.mode})`,
    ["path", "p50 ms", "p99 ms"],
    [
      row("plain spawn of the command (floor, same run)", plain),
      row("launch request into a running executor", launch),
      row("driver startTask: new executor + launch (compiled)", full),
    ],
  );
  console.log(machineLine());
} finally {
  for (const parentDir of parentCgroupDirs(layout, cgroupParent)) removeDir(parentDir);
  rmSync(dir, { recursive: true, force: true });
}
