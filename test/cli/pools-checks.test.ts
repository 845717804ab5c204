/**
 * Nomad 1.6's node pool, alloc checks and job restart commands, run as
 * drover's CLI against a real agent (`drover agent -dev`, its node in the
 * pool "edge", raw_exec tasks) with nothing but NOMAD_ADDR set, asserting
 * what a user sees and what the API answers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AllocListStub } from "../../src/structs/alloc.ts";
import type { NodePool } from "../../src/structs/node-pool.ts";
import { testCgroupParent } from "../helpers/cgroups.ts";
import { executorsUnder, freePort, isRunning, killPids, pidsWithCmdline, tempDir, waitFor } from "../helpers/index.ts";
import { drover } from "./drover-cli.ts";

const MAIN = join(import.meta.dir, "../../src/main.ts");
afterAll(async () => {
  for (const job of ["edge-web", "stuck", "checked", "restarted"]) await run("job", "stop", "-purge", "-detach", job);
  await waitFor("the tasks to end", () => executorsUnder(join(dir, "data", "run")).length === 0, { timeoutMs: 20_000 }).catch(() => undefined);
  killPids([agentPid].filter(isRunning));
  killPids(pidsWithCmdline(dir));
}, 30_000);
const dir = tempDir("drover-pools-checks-");
const cgroupParent = testCgroupParent();
let address = "";
let port = 0;
let env: Record<string, string> = {};
let agentPid = 0;

const run = (...argv: string[]) => drover(argv, env);
const api = async <T>(path: string): Promise<T> => (await (await fetch(`${address}${path}`)).json()) as T;
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const sleepJob = (id: string, pool: string | undefined, count = 1, extra = "") =>
  file(
    `${id}.hcl`,
    `job "${id}" {
  datacenters = ["dc1"]
${pool ? `  node_pool = "${pool}"\n` : ""}  group "g" {
    count = ${count}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
${extra}
    }
  }
}
`,
  );

const runningAllocs = async (job: string, count: number) => {
  let allocs: AllocListStub[] = [];
  await waitFor(`${count} running allocs of ${job}`, async () => {
    allocs = (await api<AllocListStub[]>(`/v1/job/${job}/allocations`)).filter((alloc) => alloc.ClientStatus === "running");
    return allocs.length === count;
  }, { timeoutMs: 30_000 });
  return allocs;
};

beforeAll(async () => {
  port = await freePort();
  const config = file("agent.hcl", `ports {\n  http = ${port}\n}\nclient {\n  node_pool = "edge"\n  cgroup_parent = "${cgroupParent}"\n}\n`);
  const agent = Bun.spawn([process.execPath, MAIN, "agent", "-dev", "-config", config, "-data-dir", join(dir, "data"), "-log-json"], { stdout: "ignore", stderr: "ignore" });
  agentPid = agent.pid;
  address = `http://127.0.0.1:${port}`;
  env = { NOMAD_ADDR: address };
  await waitFor("the agent's node to be ready", async () => (await run("node", "status")).out.includes("ready"), { timeoutMs: 30_000 });
}, 40_000);

describe("node pool", () => {
  test("list: the built-in pools and the node's own", async () => {
    const list = await run("node", "pool", "list");
    expect(list.code).toBe(0);
    expect(list.out.split("\n").map((line) => line.trim().split(/\s{2,}/))).toEqual([
      ["Name", "Description"],
      ["all", "Node pool with all nodes in the cluster."],
      ["default", "Default node pool."],
      ["edge", "<none>"],
      [""],
    ]);
    const json = JSON.parse((await run("node", "pool", "list", "-json")).out) as NodePool[];
    expect(json.map((pool) => pool.Name)).toEqual(["all", "default", "edge"]);
  });

  test("apply (HCL and JSON), info, and refusals", async () => {
    const hcl = file("prod.hcl", `node_pool "prod" {\n  description = "Production"\n  meta {\n    env = "prod"\n  }\n  scheduler_config {\n    scheduler_algorithm = "spread"\n  }\n}\n`);
    expect(await run("node", "pool", "apply", hcl)).toMatchObject({ code: 0, out: 'Successfully applied node pool "prod"!\n' });
    const info = await run("node", "pool", "info", "pro");
    expect(info.code).toBe(0);
    expect(info.out).toMatch(/^Name\s+= prod\nDescription\s+= Production\n\nMetadata\nenv = prod\n\nScheduler Configuration\nScheduler Algorithm = spread\n$/);
    const json = file("spare.json", JSON.stringify({ Name: "spare", Description: "Spare nodes" }));
    expect(await run("node", "pool", "apply", "-json", json)).toMatchObject({ code: 0, out: 'Successfully applied node pool "spare"!\n' });
    expect(JSON.parse((await run("node", "pool", "info", "-json", "spare")).out)).toMatchObject({ Name: "spare", Description: "Spare nodes", Meta: null });
    expect((await run("node", "pool", "info", "spare")).out).toContain("No metadata\n\nScheduler Configuration\nNo scheduler configuration");
    expect((await run("node", "pool", "info", "edge")).out).toMatch(/^Name\s+= edge\nDescription = <none>\n/);

    const builtIn = file("default.hcl", `node_pool "default" {\n  description = "mine"\n}\n`);
    expect(await run("node", "pool", "apply", builtIn)).toMatchObject({ code: 1, err: expect.stringContaining('modifying node pool "default" is not allowed') });
    const bad = file("bad.hcl", `node_pool "prod" {\n  colour = "red"\n}\n`);
    expect(await run("node", "pool", "apply", bad)).toMatchObject({ code: 1, err: expect.stringContaining("colour") });
    expect(await run("node", "pool", "info", "nope")).toMatchObject({ code: 1, err: expect.stringContaining('No node pool with prefix "nope" found') });
  });

  test("a job is placed only in its pool; nodes and jobs of a pool", async () => {
    expect((await run("job", "run", "-detach", sleepJob("edge-web", "edge"))).code).toBe(0);
    expect((await run("job", "run", "-detach", sleepJob("stuck", undefined))).code).toBe(0);
    const [alloc] = await runningAllocs("edge-web", 1);
    const [node] = await api<{ ID: string; Name: string }[]>("/v1/nodes");
    expect(alloc!.NodeID).toBe(node!.ID);
    // The default pool has no node: the job waits, placed nowhere.
    await waitFor("stuck's evaluation to be blocked", async () => (await api<{ Status: string }[]>("/v1/job/stuck/evaluations")).some((evaluation) => evaluation.Status === "blocked"));
    expect(await api<AllocListStub[]>("/v1/job/stuck/allocations")).toEqual([]);

    const nodes = await run("node", "pool", "nodes", "edge");
    expect(nodes.out.split("\n")[0]).toMatch(/^ID\s+DC\s+Name\s+Class\s+Drain\s+Eligibility\s+Status$/);
    expect(nodes.out).toContain(`${node!.ID.slice(0, 8)}  dc1`);
    expect((await run("node", "pool", "nodes", "prod")).out).toBe("No nodes\n");
    expect(JSON.parse((await run("node", "pool", "nodes", "-json", "all")).out)).toMatchObject([{ ID: node!.ID, NodePool: "edge" }]);
    const jobs = await run("node", "pool", "jobs", "edge");
    expect(jobs.out.split("\n")[0]).toMatch(/^ID\s+Type\s+Priority\s+Status\s+Submit Date$/);
    expect(jobs.out).toMatch(/\nedge-web\s+service\s+50\s+running\s+/);
    expect((await run("node", "pool", "jobs", "default")).out).toMatch(/\nstuck\s+service\s+50\s+pending\s+/);
    expect((await run("node", "pool", "jobs", "prod")).out).toBe("No jobs\n");
  });

  test("delete: refused while the pool is in use, done when it is not", async () => {
    expect(await run("node", "pool", "delete", "edge")).toMatchObject({ code: 1, err: expect.stringContaining('node pool "edge" has non-terminal jobs; node pool "edge" has nodes') });
    expect(await run("node", "pool", "delete", "all")).toMatchObject({ code: 1, err: expect.stringContaining('deleting built-in node pool "all" is not allowed') });
    expect(await run("node", "pool", "delete", "spare")).toMatchObject({ code: 0, out: 'Successfully deleted node pool "spare"!\n' });
    expect((await run("node", "pool", "list")).out).not.toContain("spare");
  });
});

describe("alloc checks", () => {
  test("each service check's latest result, in Nomad's shape and layout", async () => {
    // The agent's own HTTP port answers the http check; nothing listens on the tcp check's.
    const closed = await freePort();
    const services = `      service {
        name     = "api"
        provider = "nomad"
        port     = "${port}"
        check {
          name     = "health"
          type     = "http"
          path     = "/v1/agent/health"
          interval = "1s"
          timeout  = "1s"
        }
        check {
          name      = "closed"
          type      = "tcp"
          port      = "${closed}"
          interval  = "1s"
          timeout   = "1s"
          on_update = "ignore"
        }
      }`;
    expect((await run("job", "run", "-detach", sleepJob("checked", "edge", 1, services))).code).toBe(0);
    const [alloc] = await runningAllocs("checked", 1);
    type Result = { ID: string; Status: string; Check: string; Task?: string; StatusCode?: number; Output: string; Mode: string; Group: string; Service: string; Timestamp: number };
    let checks: Record<string, Result> = {};
    await waitFor("both checks to have run", async () => {
      checks = await api<Record<string, Result>>(`/v1/client/allocation/${alloc!.ID}/checks`);
      return Object.values(checks).length === 2 && Object.values(checks).every((check) => check.Status !== "pending");
    });
    const byName = Object.fromEntries(Object.values(checks).map((check) => [check.Check, check]));
    expect(byName.health).toMatchObject({ Status: "success", StatusCode: 200, Output: "nomad: http ok", Mode: "healthiness", Group: "checked.g[0]", Task: "t", Service: "api" });
    expect(byName.closed).toMatchObject({ Status: "failure", Mode: "readiness", Output: expect.stringContaining("ECONNREFUSED") });
    expect(byName.closed!.StatusCode).toBeUndefined();
    for (const [id, check] of Object.entries(checks)) expect(check.ID).toBe(id);
    expect(byName.health!.ID).toMatch(/^[0-9a-f]{32}$/);

    const out = (await run("alloc", "checks", alloc!.ID.slice(0, 8))).out;
    expect(out).toStartWith("Status of 2 Nomad Service Checks\n\n");
    expect(out).toContain(`ID          =  ${byName.health!.ID}\nName        =  health\nGroup       =  checked.g[0]\nTask        =  t\nService     =  api\nStatus      =  success\nStatusCode  =  200\nMode        =  healthiness\nTimestamp   =  `);
    expect(out).toContain("Output      =  nomad: http ok\n\n");
    expect(out).toMatch(/Name       =  closed\nGroup      =  checked\.g\[0\]\nTask       =  t\nService    =  api\nStatus     =  failure\nMode       =  readiness\n/);
    expect(Object.keys(JSON.parse((await run("alloc", "checks", "-json", alloc!.ID)).out)).sort()).toEqual(Object.keys(checks).sort());
    expect(await run("alloc", "checks", "ffffffff")).toMatchObject({ code: 1 });
  });
});

describe("job restart", () => {
  type Full = { ID: string; NextAllocation: string; ClientStatus: string; TaskStates: Record<string, { Restarts: number }> | null };
  const restartsOf = async (id: string) => (await api<Full>(`/v1/allocation/${id}`)).TaskStates?.t?.Restarts ?? 0;
  // A job with a deployment waits for it: restarts are refused while one is active.
  const deploymentDone = (job: string) =>
    waitFor(`${job}'s deployment to finish`, async () => (await api<{ Status: string }[]>(`/v1/job/${job}/deployments`)).every((d) => d.Status === "successful"), { timeoutMs: 40_000 });

  test("refuses what Nomad refuses without a terminal, naming the flag", async () => {
    expect(await run("job", "restart", "edge-web")).toMatchObject({ code: 1, err: expect.stringContaining('Invalid -on-error value "ask": "ask" cannot be used when terminal is not interactive') });
    expect(await run("job", "restart", "-yes", "-batch-size", "0", "edge-web")).toMatchObject({ code: 1, err: expect.stringContaining('Invalid -batch-size value "0": number value must be greater than zero') });
    expect(await run("job", "restart", "-yes", "-batch-size", "x", "edge-web")).toMatchObject({ code: 1, err: expect.stringContaining("batch size must be an integer or a percentage") });
    expect(await run("job", "restart", "-yes", "-reschedule", "-task", "t", "edge-web")).toMatchObject({ code: 1, err: expect.stringContaining("The -reschedule option cannot be used with -task") });
    expect(await run("job", "restart", "-yes", "-task", "nope", "edge-web")).toMatchObject({ code: 0, out: "No allocations to restart\n" });
  });

  test("in place, in batches: every running alloc's tasks restart, the allocs stay", async () => {
    expect((await run("job", "run", "-detach", sleepJob("restarted", "edge", 3))).code).toBe(0);
    const allocs = await runningAllocs("restarted", 3);
    await deploymentDone("restarted");
    const restarted = await run("job", "restart", "-yes", "-batch-size", "2", "restarted");
    expect(restarted.err).toBe("");
    expect(restarted.code).toBe(0);
    const lines = restarted.out.split("\n");
    expect(lines[0]).toMatch(/^==> \S+: Restarting 3 allocations$/);
    expect(lines[1]).toMatch(/^==> \S+: Restarting 1st batch of 2 allocations$/);
    expect(lines.filter((line) => /^    \S+: Restarting running tasks in allocation "[0-9a-f]{8}" for group "g"$/.test(line))).toHaveLength(3);
    expect(restarted.out).toMatch(/==> \S+: Restarting 2nd batch of 1 allocations\n/);
    expect(restarted.out).toMatch(/==> \S+: Job restart finished\n\nJob restarted successfully!\n$/);
    for (const alloc of allocs) await waitFor(`alloc ${alloc.ID} restarted once`, async () => (await restartsOf(alloc.ID)) === 1);
    expect((await runningAllocs("restarted", 3)).map((alloc) => alloc.ID).sort()).toEqual(allocs.map((alloc) => alloc.ID).sort());
  }, 60_000);

  test("-reschedule: each alloc is stopped and replaced by a running one", async () => {
    const before = await runningAllocs("restarted", 3);
    const [target] = before;
    const group = "g";
    // -group narrows it down to the group; -batch-size 100% takes them all at once.
    const rescheduled = await run("job", "restart", "-yes", "-reschedule", "-group", group, "-batch-size", "100%", "-verbose", "restarted");
    expect(rescheduled.err).toBe("");
    expect(rescheduled.code).toBe(0);
    expect(rescheduled.out).toContain(`: Rescheduling allocation "${target!.ID}" for group "g"`);
    expect(rescheduled.out).toMatch(new RegExp(`: Allocation "${target!.ID}" replaced by "([0-9a-f-]{36})", waiting for "\\1" to start running`));
    expect(rescheduled.out).toContain("Job restarted successfully!");
    const after = await runningAllocs("restarted", 3);
    expect(after.some((alloc) => before.some((old) => old.ID === alloc.ID))).toBe(false);
    for (const old of before) expect((await api<Full>(`/v1/allocation/${old.ID}`)).NextAllocation).not.toBe("");
  }, 60_000);

  test("-task restarts only that task; -all-tasks every task", async () => {
    await deploymentDone("restarted");
    const allocs = await runningAllocs("restarted", 3);
    const counts = await Promise.all(allocs.map((alloc) => restartsOf(alloc.ID)));
    const byTask = await run("job", "restart", "-yes", "-on-error", "fail", "-task", "t", "-batch-size", "3", "restarted");
    expect(byTask.code).toBe(0);
    expect(byTask.out.split("\n").filter((line) => /: Restarting task "t" in allocation "[0-9a-f]{8}" for group "g"$/.test(line))).toHaveLength(3);
    for (const [i, alloc] of allocs.entries()) await waitFor(`alloc ${alloc.ID} restarted again`, async () => (await restartsOf(alloc.ID)) === counts[i]! + 1);
    const all = await run("job", "restart", "-yes", "-all-tasks", "-batch-size", "3", "restarted");
    expect(all.code).toBe(0);
    expect(all.out.split("\n").filter((line) => /: Restarting all tasks in allocation "[0-9a-f]{8}" for group "g"$/.test(line))).toHaveLength(3);
  }, 60_000);

  test("an active deployment stops it before any alloc restarts, exit 1", async () => {
    // A new version of the job starts a deployment, which stays active for its min_healthy_time.
    expect((await run("job", "run", "-detach", sleepJob("restarted", "edge", 3, '      env {\n        VERSION = "2"\n      }'))).code).toBe(0);
    await waitFor("the new deployment", async () => (await api<{ Status: string }[]>("/v1/job/restarted/deployments")).some((d) => d.Status === "running"));
    const refused = await run("job", "restart", "-yes", "restarted");
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/==> \S+: Job restart finished with errors\n$/);
    expect(refused.err).toMatch(/^\n1 error occurred while restarting job:\n\* Deployment "[0-9a-f]{8}" is "running"\n$/);
  }, 30_000);
});
