/**
 * A compiled agent for the bench/ scripts that drive the whole product: its
 * own temporary data dir, a free port, a cgroup parent of its own, raw_exec
 * on; and a clean-up that ends everything it left (executors and the log
 * pump outlive agents by design), through the tasks' cgroups too.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { readProcs, removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { detachMountsUnder } from "../src/runtime/mounts.ts";
import { spawnProcess, type ChildProcess } from "../src/runtime/spawn.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { freePort, killPids, pidsWithCmdline, sleep } from "../test/helpers/index.ts";

/** How often the health endpoint is tried while an agent starts; small next to what is measured. */
const HEALTH_POLL_MS = 2;
/** After SIGKILLing a cgroup's processes, the pause before its directory is removed. */
const CGROUP_KILL_SETTLE_MS = 50;

export interface BenchAgent {
  readonly binary: string;
  readonly dir: string;
  readonly dataDir: string;
  readonly address: string;
  readonly port: number;
  /** Starts the agent (its stderr appended to <dir>/agent.log); see untilHealthy. */
  start(): ChildProcess;
  /** Resolves once the agent's API answers. */
  untilHealthy(): Promise<void>;
  /** Kills `agent` and everything it left, and removes the directory. */
  cleanUp(agent: ChildProcess): Promise<void>;
}

export async function benchAgent(prefix: string, client: Record<string, unknown> = {}): Promise<BenchAgent> {
  const binary = ensureBinary();
  const cgroupParent = `drover-bench-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dataDir = join(dir, "data");
  const port = await freePort();
  const address = `http://127.0.0.1:${port}`;
  const config = join(dir, "agent.json");
  writeFileSync(
    config,
    JSON.stringify({
      data_dir: dataDir,
      ports: { http: port },
      log_level: "WARN",
      client: { cgroup_parent: cgroupParent, ...client },
      plugin: { raw_exec: { config: { enabled: true } } },
    }),
  );
  return {
    binary,
    dir,
    dataDir,
    address,
    port,
    start() {
      const log = openSync(join(dir, "agent.log"), "a");
      const agent = spawnProcess({ argv: [binary, "agent", "-config", config], env: process.env, stderr: log });
      closeSync(log);
      return agent;
    },
    async untilHealthy() {
      while (!(await fetch(`${address}/v1/agent/health`).then((r) => r.ok, () => false))) await sleep(HEALTH_POLL_MS);
    },
    async cleanUp(agent) {
      agent.kill("SIGKILL");
      await agent.exited;
      killPids(pidsWithCmdline(dir));
      for (const parent of parentCgroupDirs(detectCgroups(), cgroupParent)) {
        if (!existsSync(parent)) continue;
        for (const task of readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
          killPids(readProcs(join(parent, task.name)));
          await sleep(CGROUP_KILL_SETTLE_MS);
          removeDir(join(parent, task.name));
        }
        removeDir(parent);
      }
      detachMountsUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
