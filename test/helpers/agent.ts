/**
 * An agent for end-to-end tests, run by the compiled binary or under Deno
 * (runtimes.ts): a data dir and cgroup parent of the test file's own, a free
 * port, a log file per start, the CLI (the same runtime) pointed at it, and
 * everything it leaves (the logmon and executors outlive agents by design;
 * an isolated task outlives a killed executor) ended after the file.
 */
import { afterAll } from "bun:test";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import type { TestCerts } from "./tls.ts";
import { testCgroupParent } from "./cgroups.ts";
import { executorsUnder, freePort, killPids, pidsWithCmdline, tempDir, waitFor } from "./index.ts";
import { droverRuntime, type DroverRuntime } from "./runtimes.ts";

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
  readonly runtime: DroverRuntime;
  /** The agent process of the latest start. */
  readonly process: ChildProcess;
  /** Starts the agent (again) and waits until its API answers: healthy, or (`healthy: false`) at all. */
  start(options?: { healthy?: boolean }): Promise<void>;
  /** Runs `drover <args>` against this agent. */
  cli(...args: string[]): Promise<CliResult>;
  get<T>(path: string): Promise<T>;
  /** Waits until no executor of this agent runs any more. */
  executorsGone(): Promise<void>;
  /** The ACL token `cli` and `get` send (DROVER_TOKEN); none until set. */
  token: string | undefined;
  /** fetch against the agent, trusting its test CA when it serves TLS. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** Lines of the log of an agent that ended unasked, printed with the tests' output. */
const AGENT_LOG_TAIL_LINES = 40;

export interface TestAgentOptions {
  /** Serve the API over TLS with these certificates (tls { http = true ... }); the CLI trusts their CA. */
  certs?: TestCerts;
}

/**
 * An agent whose config is `config` merged over a test's defaults (data dir,
 * port, its own cgroup parent, raw_exec on), started with `agentEnv` added to
 * this process's environment, run by `runtime` (the compiled binary by
 * default). Call at the top level of a test file: the clean-up is registered
 * for the file's end.
 */
export async function testAgent(
  prefix: string,
  config: Record<string, unknown> = {},
  agentEnv: Record<string, string> = {},
  runtime: DroverRuntime = droverRuntime("bun"),
  options: TestAgentOptions = {},
): Promise<TestAgent> {
  const started: ChildProcess[] = [];
  let ending = false;
  // Registered before tempDir's own clean-up: afterAll hooks run in the order registered, and the
  // dir must outlive every process that writes into it (an agent still running after the delete
  // would make parts of it again and leave them).
  afterAll(async () => {
    ending = true;
    // Through the handle: it signals nothing once the agent is reaped and its pid is free again.
    for (const agent of started) agent.kill("SIGKILL");
    killPids(pidsWithCmdline(dir));
    await Promise.all(started.map((agent) => agent.exited));
  });
  const dir = tempDir(prefix);
  const dataDir = join(dir, "data");
  const cgroupParent = testCgroupParent();
  const port = await freePort();
  const { certs } = options;
  const address = `${certs ? "https" : "http"}://127.0.0.1:${port}`;
  const tls = certs ? { ca: readFileSync(certs.ca, "utf8") } : undefined;
  const configPath = join(dir, "agent.json");
  const client = (config.client as Record<string, unknown> | undefined) ?? {};
  writeFileSync(
    configPath,
    JSON.stringify({
      data_dir: dataDir,
      ports: { http: port },
      log_level: "DEBUG",
      plugin: { raw_exec: { config: { enabled: true } } },
      ...(certs ? { tls: { http: true, cert_file: certs.serverCert, key_file: certs.serverKey } } : {}),
      ...config,
      client: { cgroup_parent: cgroupParent, ...client },
    }),
  );
  const env = { ...process.env, ...agentEnv, DROVER_ADDR: address, ...(certs ? { DROVER_CACERT: certs.ca } : {}) };

  const agentFetch = (path: string, init: RequestInit = {}) =>
    fetch(`${address}${path}`, { ...init, ...(tls ? { tls } : {}), headers: { ...(self.token ? { "X-Nomad-Token": self.token } : {}), ...(init.headers as Record<string, string>) } });
  const self: TestAgent = {
    token: undefined,
    fetch: agentFetch,
    dir,
    dataDir,
    address,
    runtime,
    get process() {
      return started.at(-1)!;
    },
    async start({ healthy = true } = {}) {
      const logPath = join(dir, `agent-${started.length}.log`);
      const log = openSync(logPath, "a");
      const spawned = spawnProcess({ argv: [...runtime.argv, "agent", "-config", configPath, "-log-json"], env, stderr: log });
      closeSync(log);
      // Signals sent through this handle are the test's; an agent that ends without one is a finding.
      let signalled = false;
      const child: ChildProcess = {
        pid: spawned.pid,
        exited: spawned.exited,
        stdout: spawned.stdout,
        stderr: spawned.stderr,
        kill(signal) {
          signalled = true;
          spawned.kill(signal);
        },
        unref: () => spawned.unref(),
      };
      started.push(child);
      // Its log goes with the test's dir: an agent that ends unasked shows its end here, beside the failures it causes.
      void spawned.exited.then((status) => {
        if (signalled || ending) return;
        let tail: string;
        try {
          tail = readFileSync(logPath, "utf8").split("\n").slice(-AGENT_LOG_TAIL_LINES).join("\n");
        } catch (err) {
          tail = `(unreadable: ${(err as Error).message})`;
        }
        console.error(`agent ${spawned.pid} (${dir}) ended unasked with code ${status.exitCode}, signal ${status.signal}; the end of its log:\n${tail}`);
      });
      await waitFor("agent health", async () => {
        const response = await agentFetch("/v1/agent/health").catch(() => null);
        return healthy ? response?.ok : response !== null;
      });
    },
    async cli(...args) {
      const child = spawnProcess({ argv: [...runtime.argv, ...args], env: { ...env, ...(self.token ? { DROVER_TOKEN: self.token } : {}) }, stdout: "pipe", stderr: "pipe" });
      const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
      return { code: status.exitCode, stdout, stderr };
    },
    async get<T>(path: string) {
      return (await (await agentFetch(path)).json()) as T;
    },
    async executorsGone() {
      await waitFor("executors gone", () => executorsUnder(join(dataDir, "run")).length === 0);
    },
  };
  return self;
}
