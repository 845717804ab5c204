import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { jobCommand } from "../../src/cli/job/index.ts";
import { nodeCommand } from "../../src/cli/node/index.ts";
import type { AllocListStub } from "../../src/structs/alloc.ts";
import { executorsUnder, freePort, isRunning, killPids, pidsWithCmdline, tempDir, waitFor } from "../helpers/index.ts";
import { testCgroupParent } from "../helpers/cgroups.ts";
import { captureIo } from "./harness.ts";

const MAIN = join(import.meta.dir, "../../src/main.ts");

function startAgent(configPath: string, dataDir: string) {
  return Bun.spawn([process.execPath, MAIN, "agent", "-dev", "-config", configPath, "-data-dir", dataDir, "-log-json"], {
    stdout: "ignore",
    stderr: "ignore",
  });
}

const cgroupParent = testCgroupParent();

describe("drover agent -dev with the embedded server", () => {
  test("job run registers and places; the server's state survives a SIGKILL of the agent", async () => {
    const dir = tempDir("drover-agent-dev-");
    const port = await freePort();
    const config = join(dir, "agent.hcl");
    writeFileSync(config, `ports {\n  http = ${port}\n}\nclient {\n  cgroup_parent = "${cgroupParent}"\n}\n`);
    const jobPath = join(dir, "job.hcl");
    writeFileSync(jobPath, 'job "dev" {\n group "g" {\n count = 2\n task "t" {\n driver = "raw_exec"\n config {\n command = "/bin/sleep"\n args = ["60"]\n }\n }\n }\n}\n');
    const address = `http://127.0.0.1:${port}`;
    const env = { DROVER_ADDR: address };
    const pids: number[] = [];
    try {
      const first = startAgent(config, join(dir, "data"));
      pids.push(first.pid);
      await waitFor("the agent's node", async () => (await nodeCommand(["status"], captureIo(env))) === 0);
      const run = captureIo(env);
      expect(await jobCommand(["run", "-detach", jobPath], run)).toBe(0);
      const before = ((await (await fetch(`${address}/v1/job/dev/allocations`)).json()) as AllocListStub[]).map((alloc) => alloc.ID).sort();
      expect(before).toHaveLength(2);

      first.kill("SIGKILL");
      await first.exited;
      const second = startAgent(config, join(dir, "data"));
      pids.push(second.pid);
      await waitFor("the restarted agent", async () => (await nodeCommand(["status"], captureIo(env))) === 0);
      const after = ((await (await fetch(`${address}/v1/job/dev/allocations`)).json()) as AllocListStub[]).map((alloc) => alloc.ID).sort();
      expect(after).toEqual(before);
      const status = captureIo(env);
      await jobCommand(["status", "dev"], status);
      expect(status.out).toMatch(/Status\s+= running/);
      // The tasks are real: stop them before the agent, which leaves running tasks alone.
      expect(await jobCommand(["stop", "dev"], captureIo(env))).toBe(0);
      await waitFor("the tasks' executors to end", () => executorsUnder(join(dir, "data", "run")).length === 0);
      second.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    } finally {
      killPids(pids.filter(isRunning));
      // The log pump outlives agents by design.
      killPids(pidsWithCmdline(dir));
    }
  });

  test("-http-port chooses the port (Nomad has no flag for it) and the agent prints its UI address there; -h shows it; -bind with a port is refused", async () => {
    const help = Bun.spawnSync([process.execPath, MAIN, "agent", "-h"]);
    expect(help.stdout.toString()).toContain("-http-port <port>");
    const dir = tempDir("drover-agent-port-");
    const config = join(dir, "agent.hcl");
    writeFileSync(config, `client {\n  cgroup_parent = "${cgroupParent}"\n}\n`);
    const port = await freePort();
    const agent = Bun.spawn([process.execPath, MAIN, "agent", "-dev", "-http-port", String(port), "-config", config, "-data-dir", join(dir, "data"), "-log-json"], {
      stdout: "ignore",
      stderr: "pipe",
    });
    let log = "";
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of agent.stderr) log += decoder.decode(chunk, { stream: true });
    })();
    try {
      await waitFor("the agent on the chosen port", async () => (await fetch(`http://127.0.0.1:${port}/v1/agent/health`).catch(() => null))?.ok);
      const uiLine = await waitFor("the agent's UI address in its log", () =>
        log.split("\n").find((line) => line.includes('"ui":')),
      );
      expect(JSON.parse(uiLine)).toMatchObject({ ui: `http://127.0.0.1:${port}/ui/`, msg: `web UI at http://127.0.0.1:${port}/ui/` });
      expect((await fetch(`http://127.0.0.1:${port}/ui/`)).ok).toBe(true);
      agent.kill("SIGTERM");
      expect(await agent.exited).toBe(0);
    } finally {
      killPids([agent.pid].filter(isRunning));
      killPids(pidsWithCmdline(dir));
    }
    const bad = Bun.spawnSync([process.execPath, MAIN, "agent", "-dev", "-bind", "127.0.0.1:24646"]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr.toString()).toBe("drover agent: command-line flags: bind_addr: expected an address without a port: the port is ports.http (or -http-port)\n");
  }, 30_000);
});
