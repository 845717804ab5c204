/**
 * drover as client nodes of a real Nomad 0.12 server: three compiled drover
 * agents on 127.0.0.1 join it, Nomad's scheduler places a job over them, and
 * Nomad's CLI reads their allocs; a job that needs a host volume goes to
 * the one drover node that offers it; a drover agent killed and brought back,
 * and the server killed and brought back, leave every task running exactly
 * once; a Nomad client node beside them runs the same jobs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent, type TestAgent } from "../helpers/agent.ts";
import { freePort, isRunning, killPids, pidsWithEnv, tempDir, waitFor } from "../helpers/index.ts";
import { nomadClient, nomadGet, nomadServer, type NomadAgent } from "../helpers/nomad-agents.ts";
import { NOMAD_BINARY, nomad } from "../helpers/nomad.ts";

const skip = !NOMAD_BINARY;
const JOB = `cluster-${process.pid}`;
/** Nomad marks a silent node down after its TTL (10 s and more) plus 10 s of grace. */
const NODE_DOWN_MS = 60_000;

interface NodeStub {
  ID: string;
  Name: string;
  Status: string;
}
interface AllocStub {
  ID: string;
  NodeID: string;
  ClientStatus: string;
  DesiredStatus: string;
}

/** A short update block: the deployment completes once drover reports every alloc healthy. */
const UPDATE = `update {
      min_healthy_time = "1s"
    }
    migrate {
      max_parallel     = 3
      min_healthy_time = "1s"
    }`;

function jobFile(name: string, count: number, extra = UPDATE): string {
  const path = join(jobDir, `${name}-${count}.hcl`);
  writeFileSync(
    path,
    `job "${name}" {
  datacenters = ["dc1"]
  group "g" {
    count = ${count}
    ${extra}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello from $NOMAD_ALLOC_ID; exec sleep 3600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`,
  );
  return path;
}

// Made at the top level: their clean-up is registered for the file's end.
const server: NomadAgent = skip ? (undefined as never) : await nomadServer();
/** drover-3 is given a server that does not answer first: it fails over to the next one. */
const deadServer = `127.0.0.1:${await freePort()}`;
/** Only drover-1 offers the host volume "shared": Nomad's scheduler must place a job that needs it there. */
const sharedVolume = tempDir("drover-cluster-volume-");
writeFileSync(join(sharedVolume, "hello.txt"), "from drover-1's volume");
const drovers: TestAgent[] = skip
  ? []
  : await Promise.all(
      ["drover-1", "drover-2", "drover-3"].map((name) =>
        testAgent(`drover-cluster-${name}-`, {
          name,
          client: {
            servers: name === "drover-3" ? [deadServer, server.rpc] : [server.rpc],
            ...(name === "drover-1" ? { host_volume: { shared: { path: sharedVolume, read_only: true } } } : {}),
          },
          server: { enabled: false },
        }),
      ),
    );
const peer: NomadAgent = skip ? (undefined as never) : await nomadClient("nomad-peer", server);
const jobDir = tempDir("drover-cluster-jobs-");
const nodeIds = new Map<string, string>();

async function nodes(): Promise<NodeStub[]> {
  return nomadGet<NodeStub[]>(server, "/v1/nodes");
}

async function allocs(job: string): Promise<AllocStub[]> {
  return nomadGet<AllocStub[]>(server, `/v1/job/${job}/allocations`);
}

async function running(job: string): Promise<AllocStub[]> {
  return (await allocs(job)).filter((alloc) => alloc.ClientStatus === "running" && alloc.DesiredStatus === "run");
}

/** Pids of the job's tasks on this host: the processes with its NOMAD_ALLOC_ID. */
function taskPids(allocIds: Iterable<string>): number[] {
  return [...allocIds].flatMap((id) => pidsWithEnv("NOMAD_ALLOC_ID", id));
}

beforeAll(async () => {
  if (skip) return;
  await server.start();
  for (const agent of drovers) await agent.start();
}, 120_000);

afterAll(async () => {
  if (skip) return;
  for (const job of [JOB, `${JOB}-peer`, `${JOB}-volume`]) await nomad(server.http, "job", "stop", "-purge", job).catch(() => undefined);
  // Tasks of allocs the server lost track of (a killed agent's) are not under any agent's data dir.
  for (const job of [JOB, `${JOB}-peer`, `${JOB}-volume`]) killPids(pidsWithEnv("NOMAD_JOB_NAME", job));
});

describe.skipIf(skip)("drover as Nomad client nodes", () => {
  test("three drover agents register with the server and turn ready (one past a server that does not answer)", async () => {
    const ready = await waitFor("three ready drover nodes", async () => {
      const list = (await nodes()).filter((node) => node.Name.startsWith("drover-") && node.Status === "ready");
      return list.length === 3 ? list : null;
    });
    for (const node of ready) nodeIds.set(node.Name, node.ID);
    const node = await nomadGet<{ HTTPAddr: string; Drivers: Record<string, { Healthy: boolean }>; Attributes: Record<string, string>; HostVolumes: unknown }>(
      server,
      `/v1/node/${nodeIds.get("drover-1")}`,
    );
    expect(node.HTTPAddr).toBe(drovers[0]!.address.replace("http://", ""));
    expect(node.HostVolumes).toEqual({ shared: { Name: "shared", Path: sharedVolume, ReadOnly: true } });
    expect(node.Drivers.raw_exec?.Healthy).toBe(true);
    expect(node.Attributes["drover.version"]).toBeTruthy();
  });

  test("nomad job run places a count-6 job over the three and every task runs", async () => {
    const run = await nomad(server.http, "job", "run", jobFile(JOB, 6));
    expect(run.code).toBe(0);
    const live = await waitFor("6 running allocs", async () => {
      const list = await running(JOB);
      return list.length === 6 ? list : null;
    }, { timeoutMs: 30_000 });
    const perNode = new Set(live.map((alloc) => alloc.NodeID));
    expect(perNode).toEqual(new Set(nodeIds.values()));
    await waitFor("a task process per alloc", () => taskPids(live.map((alloc) => alloc.ID)).length === 6);
    // Nomad's deployment moves on only when the client reports each alloc healthy.
    const deployment = await waitFor("the deployment to succeed", async () => {
      const latest = await nomadGet<{ Status: string } | null>(server, `/v1/job/${JOB}/deployment`);
      return latest?.Status === "successful" ? latest : null;
    }, { timeoutMs: 30_000 });
    expect(deployment.Status).toBe("successful");
  }, 60_000);

  test("nomad alloc logs reads a task's output from its drover node", async () => {
    const [alloc] = await running(JOB);
    const logs = await waitFor("the task's first line", async () => {
      const result = await nomad(server.http, "alloc", "logs", alloc!.ID, "t");
      return result.code === 0 && result.stdout.includes(alloc!.ID) ? result : null;
    });
    expect(logs.stdout).toBe(`hello from ${alloc!.ID}\n`);
  });

  test("a job that needs a host volume is placed on the drover node that offers it, and its task reads it", async () => {
    const name = `${JOB}-volume`;
    const path = join(jobDir, `${name}.hcl`);
    writeFileSync(
      path,
      `job "${name}" {
  datacenters = ["dc1"]
  group "g" {
    volume "data" {
      type      = "host"
      source    = "shared"
      read_only = true
    }
    task "t" {
      driver = "raw_exec"
      volume_mount {
        volume      = "data"
        destination = "srv/data"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "cat srv/data/hello.txt; exec sleep 3600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`,
    );
    expect((await nomad(server.http, "job", "run", "-detach", path)).code).toBe(0);
    const [alloc] = await waitFor("the volume job running", async () => {
      const list = await running(name);
      return list.length === 1 ? list : null;
    }, { timeoutMs: 30_000 });
    expect(alloc!.NodeID).toBe(nodeIds.get("drover-1")!);
    const logs = await waitFor("the volume's file in the task's output", async () => {
      const result = await nomad(server.http, "alloc", "logs", alloc!.ID, "t");
      return result.stdout.includes("volume") ? result : null;
    });
    expect(logs.stdout).toBe("from drover-1's volume");
    expect((await nomad(server.http, "job", "stop", "-purge", name)).code).toBe(0);
  }, 60_000);

  test("what the server forwards to the node (alloc stats, a restart) is answered by drover", async () => {
    const [alloc] = await running(JOB);
    const status = await nomad(server.http, "alloc", "status", "-stats", alloc!.ID);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("Memory Stats");
    expect(status.stderr).not.toContain("Couldn't retrieve stats");

    const restart = await nomad(server.http, "alloc", "restart", alloc!.ID, "t");
    expect(restart.code).toBe(0);
    await waitFor("the restart recorded in the task's state", async () => {
      const full = await nomadGet<{ TaskStates: Record<string, { Restarts: number; State: string }> }>(server, `/v1/allocation/${alloc!.ID}`);
      return full.TaskStates.t?.Restarts === 1 && full.TaskStates.t.State === "running";
    });
  });

  test("nomad alloc exec runs a command in a task on a drover node, its output and exit code back", async () => {
    const [alloc] = await running(JOB);
    const exec = await nomad(server.http, "alloc", "exec", "-i=false", "-t=false", "-task", "t", alloc!.ID, "/bin/sh", "-c", "echo in $NOMAD_ALLOC_ID; exit 3");
    expect(exec.stdout).toBe(`in ${alloc!.ID}\n`);
    expect(exec.code).toBe(3);
  });
  test("nomad alloc fs lists (through the server) and reads (from the node) a drover alloc's files", async () => {
    const [alloc] = await running(JOB);
    const root = await nomad(server.http, "alloc", "fs", alloc!.ID);
    expect(root.code).toBe(0);
    expect(root.stdout).toMatch(/\balloc\/\s/);
    expect(root.stdout).toMatch(/\bt\/\s/);
    const stat = await nomad(server.http, "alloc", "fs", "-stat", alloc!.ID, "alloc/logs/t.stdout.0");
    expect(stat.code).toBe(0);
    expect(stat.stdout).toContain("t.stdout.0");
    const cat = await nomad(server.http, "alloc", "fs", alloc!.ID, "alloc/logs/t.stdout.0");
    expect(cat.code).toBe(0);
    expect(cat.stdout).toContain(`hello from ${alloc!.ID}\n`);
  });

  test("a killed drover agent's node goes down, its allocs are replaced, and back up it stops its old copies", async () => {
    const victim = drovers[0]!;
    const victimId = nodeIds.get("drover-1")!;
    const before = await running(JOB);
    const lost = before.filter((alloc) => alloc.NodeID === victimId).map((alloc) => alloc.ID);
    expect(lost.length).toBeGreaterThan(0);

    victim.process.kill("SIGKILL");
    await victim.process.exited;
    // Its tasks outlive it, as they outlive any agent restart.
    expect(taskPids(lost).length).toBe(lost.length);

    await waitFor("the node marked down", async () => (await nomadGet<NodeStub>(server, `/v1/node/${victimId}`)).Status === "down", { timeoutMs: NODE_DOWN_MS, intervalMs: 250 });
    const replaced = await waitFor("6 running allocs on the other nodes", async () => {
      const list = await running(JOB);
      return list.length === 6 && list.every((alloc) => alloc.NodeID !== victimId) ? list : null;
    }, { timeoutMs: 30_000 });
    expect(replaced.some((alloc) => lost.includes(alloc.ID))).toBe(false);

    await victim.start();
    await waitFor("the node ready again", async () => (await nomadGet<NodeStub>(server, `/v1/node/${victimId}`)).Status === "ready", { timeoutMs: 30_000 });
    await waitFor("its lost allocs' tasks stopped", () => taskPids(lost).length === 0, { timeoutMs: 30_000 });
    const after = await running(JOB);
    expect(after.length).toBe(6);
    expect(taskPids(after.map((alloc) => alloc.ID)).length).toBe(6);
  }, NODE_DOWN_MS + 90_000);

  test("a killed and restarted server: the clients carry on, one restarted meanwhile waits for it, all take new work", async () => {
    const before = await running(JOB);
    const pids = taskPids(before.map((alloc) => alloc.ID));
    await server.kill();

    // An agent that starts while no server answers keeps its tasks and says why it is not healthy.
    const restarted = drovers[1]!;
    restarted.process.kill("SIGKILL");
    await restarted.process.exited;
    await restarted.start({ healthy: false });
    const health = await fetch(`${restarted.address}/v1/agent/health`);
    expect(health.status).not.toBe(200);
    expect(await health.text()).toContain("registering the node failed");
    expect(pids.every(isRunning)).toBe(true);

    await server.start();
    await waitFor("every drover node ready", async () => {
      const list = (await nodes()).filter((node) => node.Name.startsWith("drover-"));
      return list.length === 3 && list.every((node) => node.Status === "ready");
    }, { timeoutMs: 30_000 });
    await waitFor("the restarted agent healthy", async () => (await fetch(`${restarted.address}/v1/agent/health`)).ok, { timeoutMs: 30_000 });
    expect(pids.every(isRunning)).toBe(true);

    const scaled = await nomad(server.http, "job", "run", jobFile(JOB, 9));
    expect(scaled.code).toBe(0);
    const live = await waitFor("9 running allocs", async () => {
      const list = await running(JOB);
      return list.length === 9 ? list : null;
    }, { timeoutMs: 30_000 });
    await waitFor("a task process per alloc", () => taskPids(live.map((alloc) => alloc.ID)).length === 9);
  }, 120_000);

  test("a Nomad 0.12 client node beside them runs the same job", async () => {
    await peer.start();
    const peerNode = await waitFor("the Nomad client node ready", async () => (await nodes()).find((node) => node.Name === "nomad-peer" && node.Status === "ready"));
    const run = await nomad(server.http, "job", "run", jobFile(`${JOB}-peer`, 2, `constraint {\n      attribute = "\${node.unique.name}"\n      value     = "nomad-peer"\n    }`));
    expect(run.code).toBe(0);
    const live = await waitFor("2 running allocs on the Nomad node", async () => {
      const list = await running(`${JOB}-peer`);
      return list.length === 2 && list.every((alloc) => alloc.NodeID === peerNode.ID) ? list : null;
    }, { timeoutMs: 30_000 });
    const logs = await waitFor("the peer task's output", async () => {
      const result = await nomad(server.http, "alloc", "logs", live[0]!.ID, "t");
      return result.stdout.includes(live[0]!.ID) ? result : null;
    });
    expect(logs.code).toBe(0);
    expect((await running(JOB)).length).toBe(9);
    await nomad(server.http, "job", "stop", "-purge", `${JOB}-peer`);
    await waitFor("the peer's tasks stopped", () => pidsWithEnv("NOMAD_JOB_NAME", `${JOB}-peer`).length === 0, { timeoutMs: 30_000 });
  }, 90_000);

  test("a drain set on the server moves the node's allocs off it and leaves it ineligible", async () => {
    const drainedId = nodeIds.get("drover-3")!;
    const on = (await running(JOB)).filter((alloc) => alloc.NodeID === drainedId).map((alloc) => alloc.ID);
    expect(on.length).toBeGreaterThan(0);
    const drain = await nomad(server.http, "node", "drain", "-enable", "-yes", "-detach", "-deadline", "1m", drainedId);
    expect(drain.code).toBe(0);
    await waitFor("the drained node's tasks stopped", () => taskPids(on).length === 0, { timeoutMs: 60_000 });
    const live = await waitFor("9 running allocs elsewhere", async () => {
      const list = await running(JOB);
      return list.length === 9 && list.every((alloc) => alloc.NodeID !== drainedId) ? list : null;
    }, { timeoutMs: 60_000 });
    expect(live.some((alloc) => on.includes(alloc.ID))).toBe(false);
    const node = await nomadGet<{ SchedulingEligibility: string }>(server, `/v1/node/${drainedId}`);
    expect(node.SchedulingEligibility).toBe("ineligible");
    expect((await nomad(server.http, "node", "eligibility", "-enable", drainedId)).code).toBe(0);
    await waitFor("eligible again", async () => (await nomadGet<{ SchedulingEligibility: string }>(server, `/v1/node/${drainedId}`)).SchedulingEligibility === "eligible");
  }, 150_000);
});
