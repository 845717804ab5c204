/**
 * Real Nomad 0.12 agents beside drover: the binary that ./nomad.ts finds,
 * run as a server or as a client node on 127.0.0.1 with free ports and a
 * data dir of its own. Tests skip, printing why, where the binary is absent.
 * Every process started here is killed by pid: after the test file
 * (nomadServer, nomadClient), or by the caller's stopAll() (the *In
 * variants, for bench/).
 */
import { afterAll } from "bun:test";
import { closeSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import { freePort, killPids, pidsWithCmdline, pidsWithEnv, tempDir, waitFor } from "./index.ts";
import { NOMAD_BINARY } from "./nomad.ts";

export interface NomadAgent {
  readonly dir: string;
  readonly http: string;
  /** host:port of the RPC port (servers). */
  readonly rpc: string;
  readonly process: ChildProcess;
  start(): Promise<void>;
  /** SIGKILL of the latest start, waiting until it has exited. */
  kill(): Promise<void>;
  /** SIGKILL of every start and of what they left running (executors, log collectors). */
  stopAll(): void;
}

/** A Nomad agent in `dir` whose HCL config is `body` plus the ports, data dir and 127.0.0.1 advertise block. */
async function nomadAgent(dir: string, name: string, body: string, ready: (agent: NomadAgent) => Promise<unknown>): Promise<NomadAgent> {
  const binary = NOMAD_BINARY!;
  mkdirSync(dir, { recursive: true });
  const [http, rpc, serf] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, "agent.hcl");
  writeFileSync(
    config,
    `name = "${name}"
data_dir = "${join(dir, "data")}"
bind_addr = "127.0.0.1"
log_level = "INFO"
ports {
  http = ${http}
  rpc  = ${rpc}
  serf = ${serf}
}
advertise {
  http = "127.0.0.1"
  rpc  = "127.0.0.1"
  serf = "127.0.0.1"
}
${body}
`,
  );
  const started: ChildProcess[] = [];
  const agent: NomadAgent = {
    dir,
    http: `http://127.0.0.1:${http}`,
    rpc: `127.0.0.1:${rpc}`,
    get process() {
      return started.at(-1)!;
    },
    async start() {
      const log = openSync(join(dir, `agent-${started.length}.log`), "a");
      // TMPDIR: Nomad's plugins put their sockets in a temp dir of their own, left behind by a SIGKILL.
      started.push(spawnProcess({ argv: [binary, "agent", "-config", config], env: { ...process.env, TMPDIR: dir }, stdout: log, stderr: log }));
      closeSync(log);
      await waitFor(`nomad ${name} ready`, () => ready(agent), { timeoutMs: 30_000, intervalMs: 100 });
    },
    async kill() {
      const child = started.at(-1)!;
      child.kill("SIGKILL");
      await child.exited;
    },
    stopAll() {
      // Through the handles: they signal nothing once a child is reaped and its pid is free again.
      for (const child of started) child.kill("SIGKILL");
      // A Nomad client's executors and log collectors outlive it by design. Its logmons' command
      // line names nothing of the agent's (`nomad logmon`): they are known by the TMPDIR they inherit.
      killPids(new Set([...pidsWithCmdline(dir), ...pidsWithEnv("TMPDIR", dir)]));
    },
  };
  return agent;
}

/** For test files (call at the top level): the agent's dir and clean-up belong to the file. */
async function forTestFile(make: (dir: string) => Promise<NomadAgent>, prefix: string): Promise<NomadAgent> {
  let agent: NomadAgent | undefined;
  // Before tempDir's clean-up (hooks run in the order registered): the dir outlives the processes writing into it.
  afterAll(() => agent?.stopAll());
  agent = await make(tempDir(prefix));
  return agent;
}

/** A single-server cluster (bootstrap_expect = 1) in `dir`, ready once it has elected itself leader; `acl` turns Nomad's ACLs on. */
export function nomadServerIn(dir: string, { acl = false } = {}): Promise<NomadAgent> {
  const body = `server {\n  enabled          = true\n  bootstrap_expect = 1\n}\n${acl ? "acl {\n  enabled = true\n}\n" : ""}`;
  return nomadAgent(dir, "server", body, async (agent) => {
    const leader = await fetch(`${agent.http}/v1/status/leader`).then((r) => (r.ok ? r.json() : ""), () => "");
    return typeof leader === "string" && leader !== "";
  });
}

export function nomadServer(options: { acl?: boolean } = {}): Promise<NomadAgent> {
  return forTestFile((dir) => nomadServerIn(dir, options), "drover-nomad-server-");
}

export function nomadClient(name: string, server: NomadAgent): Promise<NomadAgent> {
  return forTestFile((dir) => nomadClientIn(dir, name, server), `drover-nomad-${name}-`);
}

/** A Nomad client node of `server` in `dir`, with raw_exec, ready once its own API answers. */
export function nomadClientIn(dir: string, name: string, server: NomadAgent): Promise<NomadAgent> {
  const body = `client {
  enabled = true
  servers = ["${server.rpc}"]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`;
  return nomadAgent(dir, name, body, async (agent) => (await fetch(`${agent.http}/v1/agent/health?type=client`).catch(() => null))?.ok);
}

export async function nomadGet<T>(server: NomadAgent, path: string): Promise<T> {
  const response = await fetch(`${server.http}${path}`);
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}
