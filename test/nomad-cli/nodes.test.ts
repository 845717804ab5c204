/**
 * Nomad 0.12's own CLI against a drover agent: the node, agent and system
 * commands (node status, eligibility, drain; agent-info, server members,
 * monitor), judged on what they print. One agent for the file; the tests
 * run in order.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { sleepJobHcl } from "../helpers/jobs.ts";
import { field, nomad, NOMAD_BINARY, nomadMissing, nomadUntil, table } from "../helpers/nomad.ts";

const skip = NOMAD_BINARY === null;
const volumeDir = tempDir("drover-nomad-nodes-volume-");
const agent = skip ? null : await testAgent("drover-nomad-nodes-", { client: { host_volume: { shared: { path: volumeDir, read_only: true } } } });
if (agent) await agent.start();
const dir = tempDir("drover-nomad-nodes-files-");
const run = (...args: string[]) => nomad(agent!.address, ...args);

function jobFile(name: string, type: "service" | "batch", count: number): string {
  const path = join(dir, `${name}.nomad`);
  const migrate = type === "service" ? '    migrate {\n      min_healthy_time = "0s"\n    }' : "";
  writeFileSync(path, sleepJobHcl(name, count, { type, group: migrate }));
  return path;
}

/** Waits until the client has judged each of the service's allocs healthy (a drain moves only those). */
async function healthy(job: string, count: number): Promise<void> {
  await waitFor(`${count} healthy allocs of ${job}`, async () => {
    const allocs = await agent!.get<{ DesiredStatus: string; DeploymentStatus: { Healthy: boolean | null } | null }[]>(`/v1/job/${job}/allocations`);
    return allocs.filter((alloc) => alloc.DesiredStatus === "run" && alloc.DeploymentStatus?.Healthy === true).length === count;
    // Health is judged after Nomad's default min_healthy_time of 10 s: the wait must allow well past it.
  }, { timeoutMs: 60_000 });
}

async function running(job: string, count: number): Promise<void> {
  await waitFor(`${count} running allocs of ${job}`, async () => {
    const allocs = await agent!.get<{ ClientStatus: string; DesiredStatus: string }[]>(`/v1/job/${job}/allocations`);
    return allocs.filter((alloc) => alloc.ClientStatus === "running" && alloc.DesiredStatus === "run").length === count;
  });
}

describe.skipIf(skip)(`nomad node and agent commands against drover${skip ? ` (skipped: ${nomadMissing})` : ""}`, () => {
  let nodeId = "";

  test("node status lists the node; -self and -verbose describe it with its resources", async () => {
    const list = await run("node", "status");
    expect(list.code).toBe(0);
    const [header, row] = list.stdout.split("\n");
    expect(header).toMatch(/^ID +DC +Name +Class +Drain +Eligibility +Status/);
    expect(row).toMatch(/^[0-9a-f]{8} +dc1 +\S+ +<none> +false +eligible +ready/);
    nodeId = (await agent!.get<{ ID: string }[]>("/v1/nodes"))[0]!.ID;

    const self = await run("node", "status", "-self");
    expect(self.code).toBe(0);
    expect(self.stderr).toBe("");
    expect(field(self.stdout, "ID")).toBe(nodeId);
    expect(field(self.stdout, "Eligibility")).toBe("eligible");
    // Nomad lists the healthy drivers; which are depends on the host (docker needs overlayfs).
    const drivers = (await agent!.get<{ Drivers: Record<string, { Healthy: boolean }> }>(`/v1/node/${nodeId}`)).Drivers;
    const healthy = Object.keys(drivers).filter((name) => drivers[name]!.Healthy).sort();
    expect(healthy).toEqual(expect.arrayContaining(["exec", "raw_exec"]));
    expect(field(self.stdout, "Driver Status")).toBe(healthy.join(","));
    expect(table(self.stdout, "Node Events")[1]).toEqual([expect.any(String), "Cluster", "Node registered"]);
    expect(table(self.stdout, "Allocated Resources")[1]![0]).toMatch(/^0\/\d+ MHz$/);
    expect(table(self.stdout, "Host Resource Utilization")[0]).toEqual(["CPU", "Memory", "Disk"]);

    const verbose = await run("node", "status", "-verbose", nodeId.slice(0, 8));
    expect(verbose.code).toBe(0);
    expect(table(verbose.stdout, "Drivers")[0]).toEqual(["Driver", "Detected", "Healthy", "Message", "Time"]);
    expect(field(self.stdout, "Host Volumes")).toBe("shared");
    expect(table(verbose.stdout, "Host Volumes")).toEqual([["Name", "ReadOnly", "Source"], ["shared", "true", volumeDir]]);
    expect(verbose.stdout).toMatch(/^kernel\.name +=/m);
  });

  test("node eligibility: an ineligible node gets no new allocs; eligible again, they are placed", async () => {
    const off = await run("node", "eligibility", "-disable", "-self");
    expect(off.code).toBe(0);
    expect(off.stdout).toContain(`Node "${nodeId}" scheduling eligibility set: ineligible for scheduling`);
    expect((await run("job", "run", "-detach", jobFile("waits", "service", 1))).code).toBe(0);
    const status = await run("job", "status", "waits");
    expect(table(status.stdout, "Summary")[1]).toEqual(["g", "1", "0", "0", "0", "0", "0"]);
    expect(status.stdout).toContain("Placement Failure");
    expect(status.stdout).toContain("No allocations placed");

    const on = await run("node", "eligibility", "-enable", "-self");
    expect(on.stdout).toContain(`Node "${nodeId}" scheduling eligibility set: eligible for scheduling`);
    await running("waits", 1);
    const events = table((await run("node", "status", "-self")).stdout, "Node Events").map((row) => row[2]);
    expect(events).toContain("Node marked as ineligible for scheduling");
    expect(events).toContain("Node marked as eligible for scheduling");
  });

  test("node drain: service allocs move one at a time, batch ones at the deadline; progress is in the node's events", async () => {
    expect((await run("job", "run", "-detach", jobFile("svc", "service", 2))).code).toBe(0);
    expect((await run("job", "run", "-detach", jobFile("batch", "batch", 1))).code).toBe(0);
    await running("svc", 2);
    await running("batch", 1);
    await healthy("svc", 2);
    await healthy("waits", 1);

    const drain = await run("node", "drain", "-enable", "-self", "-yes", "-deadline", "2s");
    expect(drain.code).toBe(0);
    expect(drain.stdout).toContain(`Node "${nodeId}" drain strategy set`);
    expect(drain.stdout).toMatch(/Alloc "[0-9a-f-]{36}" marked for migration/);
    expect(drain.stdout).toContain(`All allocations on node "${nodeId}" have stopped`);
    expect(drain.stdout).toContain(`Drain complete for node ${nodeId}`);

    const node = await run("node", "status", "-self");
    expect(field(node.stdout, "Drain")).toBe("false");
    expect(field(node.stdout, "Eligibility")).toBe("ineligible");
    const events = table(node.stdout, "Node Events").map((row) => row[2]);
    expect(events).toContain("Node drain strategy set");
    // One alloc per group at a time (migrate.max_parallel 1): the first alloc of waits and svc, then svc's second.
    expect(events).toContain("Migrating 2 allocation(s); 2 more to migrate");
    expect(events).toContain("Migrating 1 allocation(s); 1 more to migrate");
    expect(events).toContain("Drain deadline reached: migrating the 1 remaining allocation(s)");
    expect(events[1]).toBe("Node drain complete");
    const allocs = await agent!.get<{ JobID: string; ClientStatus: string; DesiredDescription: string }[]>(`/v1/node/${nodeId}/allocations`);
    expect(allocs.filter((alloc) => alloc.ClientStatus === "running")).toEqual([]);
    expect(allocs.filter((alloc) => alloc.DesiredDescription === "alloc is being migrated").map((alloc) => alloc.JobID).sort()).toEqual(["batch", "svc", "svc", "waits"]);

    const off = await run("node", "drain", "-disable", "-self", "-yes");
    expect(off.stdout).toContain(`Node "${nodeId}" drain strategy unset`);
    expect(field((await run("node", "status", "-self")).stdout, "Eligibility")).toBe("eligible");
    await running("svc", 2);
  });

  test("agent-info, server members: this agent as its cluster's one server", async () => {
    const info = await run("agent-info");
    expect(info.code).toBe(0);
    expect(info.stdout).toContain(`  node_id = ${nodeId}`);
    expect(info.stdout).toMatch(/^nomad\n(  .*\n)*  leader = true$/m);
    const members = await run("server", "members");
    expect(members.code).toBe(0);
    const [header, row] = members.stdout.trim().split("\n");
    expect(header).toMatch(/^Name +Address +Port +Status +Leader +Protocol +Build +Datacenter +Region$/);
    expect(row).toMatch(/^\S+\.global +127\.0\.0\.1 +\d+ +alive +true +2 +\S+ +dc1 +global$/);
  });

  test("monitor streams the agent's log at the asked level", async () => {
    const debug = await nomadUntil(agent!.address, ["monitor", "-log-level=DEBUG"], (seen) => seen.includes("path=/v1/regions"), () => fetch(`${agent!.address}/v1/regions`));
    expect(debug).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[DEBUG\] http: request complete: method=GET path=\/v1\/regions status=200 duration_ms=/m);
    // Without -log-level the CLI sends an empty one, which is INFO: a reload (SIGHUP) is logged at INFO, requests are not.
    const info = await nomadUntil(agent!.address, ["monitor"], (seen) => seen.includes("configuration reloaded"), () => {
      agent!.process.kill("SIGHUP");
      return fetch(`${agent!.address}/v1/regions`);
    });
    expect(info).toMatch(/\[INFO\]  agent: configuration reloaded/);
    expect(info).not.toContain("[DEBUG]");
    const json = await nomadUntil(agent!.address, ["monitor", "-json"], (seen) => seen.includes("configuration reloaded"), () => agent!.process.kill("SIGHUP"));
    expect(JSON.parse(json.split("\n").find((line) => line.includes("configuration reloaded"))!)).toMatchObject({ "@level": "info", "@message": "configuration reloaded" });
    const bad = await run("monitor", "-log-level=LOUD");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Unknown log level: LOUD");
  });

  test("system gc and reconcile summaries answer", async () => {
    expect((await run("system", "gc")).code).toBe(0);
    const reconcile = await run("system", "reconcile", "summaries");
    expect(reconcile.code).toBe(0);
  });
});
