/**
 * `drover agent -dev` end to end, with the compiled binary and under Deno:
 * it starts, serves its API, and exits cleanly on SIGTERM, removing its
 * temporary data dir.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import { parentCgroupDirs } from "../../src/cgroups/paths.ts";
import { descendants } from "../../src/stats/process.ts";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { canUseCgroups, testCgroupParent } from "../helpers/cgroups.ts";
import { capabilities, freePort, isRunning, pidsWithCmdline, tempDir, waitFor } from "../helpers/index.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";

const started: ChildProcess[] = [];
const cgroupParent = testCgroupParent();
// Through the handles: they signal nothing once a child is reaped and its pid is free again.
afterAll(() => started.forEach((child) => child.kill("SIGKILL")));

for (const runtime of droverRuntimes()) {
  describe(`drover agent -dev (${runtime.name})`, () => {
    test("serves /v1/agent/self and /v1/client/stats, exits 0 on SIGTERM", async () => {
      const port = await freePort();
      const config = join(tempDir(), "port.hcl");
      writeFileSync(config, `ports {\n  http = ${port}\n}\n`);
      const agent = spawnProcess({ argv: [...runtime.argv, "agent", "-dev", "-config", config, "-log-json"], env: process.env, stderr: "pipe" });
      started.push(agent);
      const stderr = new Response(agent.stderr).text();
      const base = `http://127.0.0.1:${port}`;

      await waitFor("the agent's health endpoint", async () => (await fetch(`${base}/v1/agent/health`)).ok);
      const self = (await (await fetch(`${base}/v1/agent/self`)).json()) as { config: { DataDir: string; Ports: { HTTP: number } } };
      expect(self.config.Ports.HTTP).toBe(port);
      const dataDir = self.config.DataDir;
      expect(existsSync(join(dataDir, "client", "state.db"))).toBe(true);

      const stats = (await (await fetch(`${base}/v1/client/stats`)).json()) as { Memory: { Total: number }; CPU: unknown[] };
      expect(stats.Memory.Total).toBeGreaterThan(0);
      expect(stats.CPU.length).toBeGreaterThan(0);

      agent.kill("SIGTERM");
      const status = await agent.exited;
      expect(status).toEqual({ exitCode: 0, signal: 0 });
      const log = await stderr;
      expect(log).toContain('"msg":"shutdown complete"');
      expect(existsSync(dataDir)).toBe(false);
    });

    // SIGINT is Ctrl-C in a terminal.
    test.each(["SIGTERM", "SIGINT"] as const)("%s to a dev agent with running tasks ends them all and leaves nothing behind", async (signal) => {
      const port = await freePort();
      const config = join(tempDir(), "dev.json");
      // A host volume bound into each task's dir: the data dir's removal must neither fail on it nor reach into it.
      const volume = tempDir("drover-dev-volume-");
      writeFileSync(join(volume, "keep.txt"), "kept");
      writeFileSync(config, JSON.stringify({ ports: { http: port }, client: { cgroup_parent: cgroupParent, host_volume: { shared: { path: volume } } } }));
      const agent = spawnProcess({ argv: [...runtime.argv, "agent", "-dev", "-config", config], env: process.env });
      started.push(agent);
      const base = `http://127.0.0.1:${port}`;
      await waitFor("the agent's health endpoint", async () => (await fetch(`${base}/v1/agent/health`).catch(() => null))?.ok);
      const dataDir = ((await (await fetch(`${base}/v1/agent/self`)).json()) as { config: { DataDir: string } }).config.DataDir;
      const task = { Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["600"] }, VolumeMounts: [{ Volume: "data", Destination: "local/data" }] };
      const job = { Job: { ID: "dev", TaskGroups: [{ Name: "g", Count: 2, Volumes: { data: { Type: "host", Source: "shared" } }, Tasks: [task] }] } };
      expect((await fetch(`${base}/v1/jobs`, { method: "POST", body: JSON.stringify(job) })).ok).toBe(true);
      await waitFor("two running allocs", async () => {
        const allocs = (await (await fetch(`${base}/v1/job/dev/allocations`)).json()) as { ClientStatus: string }[];
        return allocs.length === 2 && allocs.every((a) => a.ClientStatus === "running");
      });
      // The executors and the log pump name the data dir on their command lines; the tasks are the executors' children.
      const helpers = pidsWithCmdline(dataDir);
      const tasks = helpers.flatMap((pid) => descendants(pid));
      expect(tasks.length).toBeGreaterThanOrEqual(2);
      // raw_exec tasks use the hierarchies that limit and measure, not every one the host has.
      if (canUseCgroups) expect(parentCgroupDirs(capabilities.cgroups, cgroupParent).some(existsSync)).toBe(true);

      if (capabilities.root) expect(mountsUnder(dataDir).filter((point) => point.endsWith("/t/local/data"))).toHaveLength(2);

      agent.kill(signal);
      expect((await agent.exited).exitCode).toBe(0);
      expect([...helpers, ...tasks].filter(isRunning)).toEqual([]);
      expect(existsSync(dataDir)).toBe(false);
      expect(mountsUnder(dataDir)).toEqual([]);
      expect(readFileSync(join(volume, "keep.txt"), "utf8")).toBe("kept");
      expect(parentCgroupDirs(capabilities.cgroups, cgroupParent).filter(existsSync)).toEqual([]);
    });

    test("SIGHUP re-reads the config files and applies a new log level", async () => {
      const port = await freePort();
      const config = join(tempDir(), "reload.json");
      writeFileSync(config, JSON.stringify({ ports: { http: port }, log_level: "WARN" }));
      const agent = spawnProcess({ argv: [...runtime.argv, "agent", "-dev", "-config", config, "-log-json"], env: process.env, stderr: "pipe" });
      started.push(agent);
      let log = "";
      void (async () => {
        const reader = agent.stderr!.getReader();
        const decoder = new TextDecoder();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) log += decoder.decode(chunk.value, { stream: true });
      })();
      await waitFor("the agent's health endpoint", async () => (await fetch(`http://127.0.0.1:${port}/v1/agent/health`).catch(() => null))?.ok);
      expect(log).not.toContain('"msg":"agent started"');

      writeFileSync(config, JSON.stringify({ ports: { http: port }, log_level: "DEBUG" }));
      agent.kill("SIGHUP");
      await waitFor("the reload's log line", () => log.includes('"log_level":"DEBUG","msg":"configuration reloaded"'));
      const self = (await (await fetch(`http://127.0.0.1:${port}/v1/agent/self`)).json()) as { config: { LogLevel: string } };
      expect(self.config.LogLevel).toBe("DEBUG");

      agent.kill("SIGTERM");
      expect((await agent.exited).exitCode).toBe(0);
      expect(log).toContain('"msg":"shutdown complete"');
    });

    test("/v1/agent/self reports the config as applied: JSON logs off a terminal, the dirs and name it derived", async () => {
      const port = await freePort();
      // No -log-json, but stderr is a pipe: the agent logs JSON, and must say so.
      const agent = spawnProcess({ argv: [...runtime.argv, "agent", "-dev", "-http-port", String(port)], env: process.env, stderr: "pipe" });
      started.push(agent);
      const log = new Response(agent.stderr).text();
      await waitFor("the agent's health endpoint", async () => (await fetch(`http://127.0.0.1:${port}/v1/agent/health`).catch(() => null))?.ok);
      const { config } = (await (await fetch(`http://127.0.0.1:${port}/v1/agent/self`)).json()) as {
        config: { LogJson: boolean; DataDir: string; NodeName: string; Client: { AllocDir: string; StateDir: string } };
      };
      expect(config.LogJson).toBe(true);
      expect(config.Client.AllocDir).toBe(join(config.DataDir, "alloc"));
      expect(config.Client.StateDir).toBe(join(config.DataDir, "client"));
      expect(config.NodeName).toBe(hostname());
      agent.kill("SIGTERM");
      expect((await agent.exited).exitCode).toBe(0);
      expect((await log).split("\n")[0]).toStartWith("{");
    });

    test("a bad config stops start-up with the file and key, exit 1", async () => {
      const config = join(tempDir(), "bad.hcl");
      writeFileSync(config, `client {\n  nonsense = true\n}\n`);
      const agent = spawnProcess({ argv: [...runtime.argv, "agent", "-dev", "-config", config], env: process.env, stderr: "pipe" });
      started.push(agent);
      const [status, stderr] = await Promise.all([agent.exited, new Response(agent.stderr).text()]);
      expect(status.exitCode).toBe(1);
      expect(stderr).toContain(`config file ${config}: unknown key "client.nonsense"`);
    });

    test("a port already in use is reported, exit 1", async () => {
      const port = await freePort();
      const holder = Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response("busy") });
      try {
        const config = join(tempDir(), "busy.hcl");
        writeFileSync(config, `ports {\n  http = ${port}\n}\n`);
        const agent = spawnProcess({ argv: [...runtime.argv, "agent", "-dev", "-config", config], env: process.env, stderr: "pipe" });
        started.push(agent);
        const [status, stderr] = await Promise.all([agent.exited, new Response(agent.stderr).text()]);
        expect(status.exitCode).toBe(1);
        expect(stderr).toContain(`cannot serve the HTTP API on 127.0.0.1:${port}`);
      } finally {
        holder.stop(true);
      }
    });
  });
}
