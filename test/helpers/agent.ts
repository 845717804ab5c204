/**
 * The compiled agent for end-to-end tests: a data dir and cgroup parent of
 * the test file's own, a free port, a log file per start, the CLI pointed at
 * it, and everything it leaves (the logmon and executors outlive agents by
 * design; an isolated task outlives a killed executor) ended after the file.
 */
import { afterAll } from "bun:test";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import { ensureBinary } from "./binary.ts";
import { testCgroupParent } from "./cgroups.ts";
import { freePort, killPids, pidsWithCmdline, tempDir, waitFor } from "./index.ts";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface TestAgent {
  /** The agent's own directory (config, logs); its data dir is `<dir>/data`. */
  readonly dir: string;
  readonly dataDir: string;
  readonly address: string;
  readonly binary: string;
  /** The agent process of the latest start. */
  readonly process: ChildProcess;
  /** Starts the agent (again) and waits until its API answers. */
  start(): Promise<void>;
  /** Runs `drover <args>` against this agent. */
  cli(...args: string[]): Promise<CliResult>;
  get<T>(path: string): Promise<T>;
  /** Waits until no executor of this agent runs any more. */
  executorsGone(): Promise<void>;
}

/**
 * An agent whose config is `config` merged over a test's defaults (data dir,
 * port, its own cgroup parent, raw_exec on), started with `agentEnv` added to
 * this process's environment. Call at the top level of a test
 * file: the clean-up is registered for the file's end.
 */
export async function testAgent(prefix: string, config: Record<string, unknown> = {}, agentEnv: Record<string, string> = {}): Promise<TestAgent> {
  const binary = ensureBinary();
  const dir = tempDir(prefix);
  const dataDir = join(dir, "data");
  const cgroupParent = testCgroupParent();
  const port = await freePort();
  const address = `http://127.0.0.1:${port}`;
  const configPath = join(dir, "agent.json");
  const client = (config.client as Record<string, unknown> | undefined) ?? {};
  writeFileSync(
    configPath,
    JSON.stringify({
      data_dir: dataDir,
      ports: { http: port },
      log_level: "DEBUG",
      plugin: { raw_exec: { config: { enabled: true } } },
      ...config,
      client: { cgroup_parent: cgroupParent, ...client },
    }),
  );
  const env = { ...process.env, ...agentEnv, DROVER_ADDR: address };
  const started: ChildProcess[] = [];
  afterAll(() => {
    // Through the handle: it signals nothing once the agent is reaped and its pid is free again.
    for (const agent of started) agent.kill("SIGKILL");
    killPids(pidsWithCmdline(dir));
  });

  return {
    dir,
    dataDir,
    address,
    binary,
    get process() {
      return started.at(-1)!;
    },
    async start() {
      const log = openSync(join(dir, `agent-${started.length}.log`), "a");
      started.push(spawnProcess({ argv: [binary, "agent", "-config", configPath, "-log-json"], env, stderr: log }));
      closeSync(log);
      await waitFor("agent health", async () => (await fetch(`${address}/v1/agent/health`).catch(() => null))?.ok);
    },
    async cli(...args) {
      const child = spawnProcess({ argv: [binary, ...args], env, stdout: "pipe", stderr: "pipe" });
      const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
      return { code: status.exitCode, stdout, stderr };
    },
    async get<T>(path: string) {
      return (await (await fetch(`${address}${path}`)).json()) as T;
    },
    async executorsGone() {
      await waitFor("executors gone", () => pidsWithCmdline(join(dataDir, "run")).length === 0);
    },
  };
}
