/**
 * ephemeral_disk { sticky = true } through a job update, with the compiled
 * binary: the replacement alloc waits for the one it replaces and takes over
 * its alloc/data, so what the old task wrote is there for the new one.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import { ensureBinary } from "../helpers/binary.ts";
import { testCgroupParent } from "../helpers/cgroups.ts";
import { freePort, killPids, pidsWithCmdline, tempDir, waitFor } from "../helpers/index.ts";

const job = (version: string) => `
job "sticky" {
  type = "service"
  group "db" {
    ephemeral_disk {
      sticky = true
      size   = 300
    }
    task "writer" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $VERSION >> $NOMAD_ALLOC_DIR/data/history; exec sleep 600"]
      }
      env {
        VERSION = "${version}"
      }
      resources {
        memory = 32
      }
    }
  }
}
`;

interface Alloc {
  ID: string;
  ClientStatus: string;
  DesiredStatus: string;
  PreviousAllocation: string;
}

const dir = tempDir("drover-e2e-sticky-");
const cgroupParent = testCgroupParent();
const agents: ChildProcess[] = [];
afterAll(() => {
  killPids(agents.map((agent) => agent.pid));
  killPids(pidsWithCmdline(dir));
});

describe("sticky ephemeral disk across a job update", () => {
  test("the replacement alloc gets the data the old one wrote", async () => {
    const binary = ensureBinary();
    const port = await freePort();
    const address = `http://127.0.0.1:${port}`;
    const dataDir = join(dir, "data");
    const config = join(dir, "agent.json");
    writeFileSync(
      config,
      JSON.stringify({ data_dir: dataDir, ports: { http: port }, client: { cgroup_parent: cgroupParent }, plugin: { raw_exec: { config: { enabled: true } } } }),
    );
    const env = { ...process.env, DROVER_ADDR: address };
    const log = openSync(join(dir, "agent.log"), "a");
    const agent = spawnProcess({ argv: [binary, "agent", "-config", config, "-log-json"], env, stderr: log });
    closeSync(log);
    agents.push(agent);
    await waitFor("agent health", async () => (await fetch(`${address}/v1/agent/health`).catch(() => null))?.ok);

    const run = async (version: string) => {
      const file = join(dir, `sticky-${version}.hcl`);
      writeFileSync(file, job(version));
      const child = spawnProcess({ argv: [binary, "job", "run", "-detach", file], env, stdout: "ignore", stderr: "pipe" });
      const [status, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      expect(stderr).toBe("");
      expect(status.exitCode).toBe(0);
    };
    const allocs = async () => (await (await fetch(`${address}/v1/job/sticky/allocations`)).json()) as Alloc[];
    const history = (alloc: string) => join(dataDir, "alloc", alloc, "alloc", "data", "history");

    await run("v1");
    const first = await waitFor("v1 running", async () => (await allocs()).find((a) => a.ClientStatus === "running"));
    await waitFor("v1 wrote its history", () => existsSync(history(first.ID)) && readFileSync(history(first.ID), "utf8") === "v1\n");

    await run("v2");
    const second = await waitFor("v2 running", async () =>
      (await allocs()).find((a) => a.ID !== first.ID && a.DesiredStatus === "run" && a.ClientStatus === "running"),
    );
    expect(second.PreviousAllocation).toBe(first.ID);
    await waitFor("v2 appended to the moved history", () => existsSync(history(second.ID)) && readFileSync(history(second.ID), "utf8") === "v1\nv2\n");
    expect(existsSync(history(first.ID))).toBe(false);

    const stop = spawnProcess({ argv: [binary, "job", "stop", "sticky"], env, stdout: "ignore", stderr: "ignore" });
    expect((await stop.exited).exitCode).toBe(0);
    await waitFor("executors gone", () => pidsWithCmdline(join(dataDir, "run")).length === 0);
    agent.kill("SIGTERM");
    expect((await agent.exited).exitCode).toBe(0);
  });
});
