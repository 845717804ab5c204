/**
 * The server endpoints Nomad's CLI and Go api package call beyond the
 * basics: plan, validate, revert, versions with diffs, deployments, search,
 * the event stream, node drain and eligibility, and the cluster's status.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import * as v from "valibot";
import { createApp } from "../../src/api/app.ts";
import { absentFeatureRoutes } from "../../src/api/routes/absent-features.ts";
import { clusterRoutes } from "../../src/api/routes/cluster.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { AgentConfigSchema } from "../../src/config/schema.ts";
import type { Allocation } from "../../src/structs/alloc.ts";
import { ALL_AT_ONCE, openTestServer, testJob, testNode } from "../server/fixtures.ts";

const { server } = openTestServer();
const node = testNode();
server.nodes.upsert(node);
const config = v.parse(AgentConfigSchema, { ports: { http: 4999 } });
const app = createApp(pino({ level: "silent" }), [...serverRoutes(server), clusterRoutes(() => config, "node-a", () => server.index), absentFeatureRoutes()]);

async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; error: string }> {
  const res = await app.request(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) return { status: res.status, body: undefined as T, error: await res.text() };
  return { status: res.status, body: (await res.json()) as T, error: "" };
}

/** Reads the event stream until `done` says it has enough. */
async function readEvents(path: string, done: (batches: { Index: number; Events: { Topic: string; Type: string; Key: string }[] }[]) => boolean, act: () => void) {
  const controller = new AbortController();
  const res = await app.request(path, { signal: controller.signal });
  expect(res.headers.get("Content-Type")).toBe("application/json");
  const reader = res.body!.getReader();
  const batches: { Index: number; Events: { Topic: string; Type: string; Key: string }[] }[] = [];
  let text = "";
  act();
  while (!done(batches)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += new TextDecoder().decode(value);
    const lines = text.split("\n");
    text = lines.pop()!;
    for (const line of lines) if (line.trim() !== "" && line !== "{}") batches.push(JSON.parse(line));
  }
  controller.abort();
  await reader.cancel();
  return batches;
}

describe("job plan, validate, revert, versions", () => {
  test("plan answers what a register would do and changes nothing", async () => {
    const indexBefore = server.index;
    const plan = await call<{ JobModifyIndex: number; Diff: { Type: string }; Annotations: { DesiredTGUpdates: Record<string, { Place: number }> }; FailedTGAllocs: null }>(
      "PUT",
      "/v1/job/planned/plan",
      { Job: testJob("planned", { count: 2 }), Diff: true },
    );
    expect(plan.body).toMatchObject({ JobModifyIndex: 0, Diff: { Type: "Added" }, Annotations: { DesiredTGUpdates: { web: { Place: 2 } } }, FailedTGAllocs: null });
    expect(server.index).toBe(indexBefore);
    expect((await call("GET", "/v1/job/planned")).status).toBe(404);

    const tooBig = await call<{ FailedTGAllocs: Record<string, { DimensionExhausted: Record<string, number> }> }>("PUT", "/v1/job/huge/plan", { Job: testJob("huge", { memory: 1_000_000 }) });
    expect(tooBig.body.FailedTGAllocs.web!.DimensionExhausted).toEqual({ memory: 1 });
    expect((await call("PUT", "/v1/job/other/plan", { Job: testJob("planned") })).status).toBe(400);
  });

  test("validate: a 200 with each problem listed, or none", async () => {
    const good = await call<{ ValidationErrors: string[]; Error: string }>("PUT", "/v1/validate/job", { Job: testJob("ok") });
    expect(good.body).toMatchObject({ ValidationErrors: [], Error: "", DriverConfigValidated: true });
    const bad = await call<{ ValidationErrors: string[]; Error: string }>("PUT", "/v1/validate/job", { Job: { ...testJob("bad"), Priority: 500 } });
    expect(bad.status).toBe(200);
    expect(bad.body.ValidationErrors).toEqual(["job: Job.Priority: expected at most 100, got 500"]);
    expect(bad.body.Error).toBe("job: Job.Priority: expected at most 100, got 500");
    expect((await call("PUT", "/v1/validate/job", {})).error).toBe("Job must be specified");
  });

  test("versions with diffs, and revert to an older version", async () => {
    await call("PUT", "/v1/jobs", { Job: testJob("rev", { count: 1 }) });
    await call("PUT", "/v1/jobs", { Job: testJob("rev", { count: 2 }) });
    const versions = await call<{ Versions: { Version: number; Stable: boolean }[]; Diffs: { TaskGroups: { Fields: { Name: string; Old: string; New: string }[] }[] }[] }>(
      "GET",
      "/v1/job/rev/versions?diffs=true",
    );
    expect(versions.body.Versions.map((version) => [version.Version, version.Stable])).toEqual([
      [1, false],
      [0, false],
    ]);
    expect(versions.body.Diffs[0]!.TaskGroups[0]!.Fields).toEqual([expect.objectContaining({ Name: "Count", Old: "1", New: "2" })]);

    expect((await call("PUT", "/v1/job/rev/revert", { JobVersion: 1 })).error).toBe("can't revert to current version");
    expect((await call("PUT", "/v1/job/rev/revert", { JobVersion: 0, EnforcePriorVersion: 5 })).error).toBe("Current job has version 1; enforcing version 5");
    expect((await call("PUT", "/v1/job/rev/revert", { JobVersion: 9 })).status).toBe(404);
    const reverted = await call<{ EvalID: string }>("PUT", "/v1/job/rev/revert", { JobVersion: 0 });
    expect(reverted.body.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.jobs.get("rev")).toMatchObject({ Version: 2, TaskGroups: [{ Count: 1 }] });
  });

  test("scale changes a group's count within its scaling bounds; each request is a scaling event", async () => {
    const job = testJob("scaled") as { TaskGroups: Record<string, unknown>[] };
    job.TaskGroups[0]!.Scaling = { Min: 1, Max: 4 };
    await call("PUT", "/v1/jobs", { Job: job });
    const scaled = await call<{ EvalID: string }>("PUT", "/v1/job/scaled/scale", { Count: 3, Target: { Job: "scaled", Group: "web" }, Message: "busy" });
    expect(scaled.status).toBe(200);
    expect((await call("PUT", "/v1/job/scaled/scale", { Count: 5, Target: { Group: "web" } })).error).toBe("group count was greater than scaling policy maximum: 5 > 4");
    expect((await call("PUT", "/v1/job/scaled/scale", { Count: 0, Target: { Group: "web" } })).error).toBe("group count was less than scaling policy minimum: 0 < 1");
    expect((await call("PUT", "/v1/job/scaled/scale", { Target: { Group: "web" }, Message: "just a note", Error: true })).status).toBe(200);
    const status = await call<{ TaskGroups: Record<string, { Desired: number; Placed: number; Events: { Count: number | null; PreviousCount: number; Message: string; EvalID: string | null }[] }> }>(
      "GET",
      "/v1/job/scaled/scale",
    );
    expect(status.body.TaskGroups.web).toMatchObject({ Desired: 3, Placed: 3 });
    expect(status.body.TaskGroups.web!.Events).toEqual([
      expect.objectContaining({ Count: null, PreviousCount: 3, Message: "just a note", Error: true, EvalID: null }),
      expect.objectContaining({ Count: 3, PreviousCount: 1, Message: "busy", EvalID: scaled.body.EvalID }),
    ]);
    expect((await call("PUT", "/v1/job/scaled/scale", { Count: 1, Target: { Group: "nope" } })).status).toBe(400);
  });

  test("scaling policies: one per group with a scaling block, its ID stable, filtered by job and type", async () => {
    type Stub = { ID: string; Enabled: boolean; Type: string; Target: Record<string, string>; CreateIndex: number; ModifyIndex: number };
    const list = await call<Stub[]>("GET", "/v1/scaling/policies");
    const scaled = list.body.filter((policy) => policy.Target.Job === "scaled");
    expect(scaled).toEqual([{ ID: expect.stringMatching(/^[0-9a-f-]{36}$/), Enabled: true, Type: "horizontal", Target: { Namespace: "default", Job: "scaled", Group: "web" }, CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) }]);
    const id = scaled[0]!.ID;
    expect((await call<Stub[]>("GET", "/v1/scaling/policies")).body.map((policy) => policy.ID)).toContain(id);
    expect((await call<Stub[]>("GET", "/v1/scaling/policies?job=scaled")).body.map((policy) => policy.ID)).toEqual([id]);
    expect((await call<Stub[]>("GET", "/v1/scaling/policies?job=scaled&type=vertical_cpu")).body).toEqual([]);
    expect((await call<Stub[]>("GET", "/v1/scaling/policies?type=horiz")).body.map((policy) => policy.ID)).toContain(id);
    const policy = await call<Record<string, unknown>>("GET", `/v1/scaling/policy/${id}`);
    expect(policy.body).toMatchObject({ ID: id, Type: "horizontal", Min: 1, Max: 4, Enabled: true, Policy: null, Target: { Job: "scaled", Group: "web" } });
    expect(await call("GET", "/v1/scaling/policy/00000000-0000-0000-0000-000000000000")).toMatchObject({ status: 404, error: "policy not found" });
  });

  test("scaling policies are listed by the request's namespace (every one with *)", async () => {
    type Stub = { Target: Record<string, string> };
    expect((await app.request("/v1/namespace/scaling-ns", { method: "PUT", body: JSON.stringify({ Name: "scaling-ns" }) })).status).toBe(200);
    const job = testJob("scaled-elsewhere") as { TaskGroups: Record<string, unknown>[] };
    job.TaskGroups[0]!.Scaling = { Min: 1, Max: 4 };
    expect((await call("PUT", "/v1/jobs?namespace=scaling-ns", { Job: job })).status).toBe(200);
    const jobsOf = async (query: string) => (await call<Stub[]>("GET", `/v1/scaling/policies${query}`)).body.map((policy) => `${policy.Target.Namespace}/${policy.Target.Job}`);
    expect(await jobsOf("")).not.toContain("scaling-ns/scaled-elsewhere");
    expect(await jobsOf("?namespace=scaling-ns")).toEqual(["scaling-ns/scaled-elsewhere"]);
    expect(await jobsOf("?namespace=*")).toEqual(expect.arrayContaining(["default/scaled", "scaling-ns/scaled-elsewhere"]));
    // Gone again, so the namespace list below is as it was.
    expect((await app.request("/v1/job/scaled-elsewhere?namespace=scaling-ns&purge=true", { method: "DELETE" })).status).toBe(200);
    expect((await app.request("/v1/namespace/scaling-ns", { method: "DELETE" })).status).toBe(200);
  });

  test("deployments: a job's latest, its list, one by ID with its allocs; none for a job without an update block", async () => {
    const latest = await call<{ ID: string; JobID: string; TaskGroups: Record<string, { DesiredTotal: number }> }>("GET", "/v1/job/scaled/deployment");
    expect(latest.body).toMatchObject({ JobID: "scaled", TaskGroups: { web: { DesiredTotal: 3 } } });
    expect((await call<{ ID: string }[]>("GET", "/v1/job/scaled/deployments")).body.map((item) => item.ID)).toContain(latest.body.ID);
    expect((await call<{ ID: string }[]>("GET", "/v1/deployments")).body.map((item) => item.ID)).toContain(latest.body.ID);
    expect((await call("GET", `/v1/deployment/${latest.body.ID}`)).body).toEqual(latest.body);
    const allocs = await call<{ DeploymentID: string }[]>("GET", `/v1/deployment/allocations/${latest.body.ID}`);
    expect(allocs.body.length).toBeGreaterThan(0);
    expect(allocs.body.every((alloc) => alloc.DeploymentID === latest.body.ID)).toBe(true);

    await call("PUT", "/v1/jobs", { Job: testJob("plain", { update: ALL_AT_ONCE }) });
    expect((await call("GET", "/v1/job/plain/deployment")).body).toBeNull();
    expect((await call("GET", "/v1/job/plain/deployments")).body).toEqual([]);
    expect((await call("GET", "/v1/deployment/abc")).status).toBe(404);
    expect((await call("PUT", "/v1/deployment/fail/abc")).status).toBe(404);
  });

  test("a terminal deployment's actions are refused in Nomad's words, with its 500", async () => {
    const { ID: id } = (await call<{ ID: string }>("GET", "/v1/job/scaled/deployment")).body;
    expect((await call("PUT", `/v1/deployment/fail/${id}`, { DeploymentID: id })).status).toBe(200);
    const indexBefore = server.index;
    const refusals = [
      await call("PUT", `/v1/deployment/fail/${id}`, { DeploymentID: id }),
      await call("PUT", `/v1/deployment/pause/${id}`, { DeploymentID: id, Pause: true }),
      await call("PUT", `/v1/deployment/pause/${id}`, { DeploymentID: id, Pause: false }),
      await call("PUT", `/v1/deployment/promote/${id}`, { DeploymentID: id, All: true }),
      await call("PUT", `/v1/deployment/allocation-health/${id}`, { DeploymentID: id, HealthyAllocationIDs: ["x"] }),
    ];
    expect(refusals.map((answer) => [answer.status, answer.error])).toEqual([
      [500, "can't fail terminal deployment"],
      [500, "can't pause terminal deployment"],
      [500, "can't resume terminal deployment"],
      [500, "can't promote terminal deployment"],
      [500, "can't set health of allocations for a terminal deployment"],
    ]);
    expect(server.index).toBe(indexBefore);
  });
});

describe("search, cluster status", () => {
  test("prefix search per context, truncated at 20, with unknown contexts refused", async () => {
    for (let i = 0; i < 22; i++) server.jobs.register(testJob(`many-${String(i).padStart(2, "0")}`, { count: 0 }));
    const res = await call<{ Matches: Record<string, string[]>; Truncations: Record<string, boolean> }>("PUT", "/v1/search", { Prefix: "many-", Context: "jobs" });
    expect(res.body.Matches.jobs).toHaveLength(20);
    expect(res.body.Truncations.jobs).toBe(true);
    const all = await call<{ Matches: Record<string, string[]> }>("POST", "/v1/search", { Prefix: node.ID.slice(0, 4), Context: "all" });
    expect(Object.keys(all.body.Matches).sort()).toEqual(["allocs", "deployment", "evals", "jobs", "nodes", "plugins", "volumes"]);
    expect(all.body.Matches.nodes).toEqual([node.ID]);
    expect((await call("PUT", "/v1/search", { Prefix: "x", Context: "things" })).status).toBe(400);
  });

  test("leader, peers, regions, namespaces", async () => {
    expect((await call("GET", "/v1/status/leader")).body).toBe("127.0.0.1:4999");
    expect((await call("GET", "/v1/status/peers")).body).toEqual(["127.0.0.1:4999"]);
    expect((await call("GET", "/v1/regions")).body).toEqual(["global"]);
    expect((await call<{ Name: string }[]>("GET", "/v1/namespaces")).body.map((namespace) => namespace.Name)).toEqual(["default"]);
    expect((await call("GET", "/v1/namespace/other")).status).toBe(404);
    expect((await call<{ Servers: { Node: string; Leader: boolean }[] }>("GET", "/v1/operator/raft/configuration")).body.Servers).toEqual([
      expect.objectContaining({ Node: "node-a.global", Leader: true, Address: "127.0.0.1:4999" }),
    ]);
  });

  test("what drover lacks is answered as a Nomad without it answers", async () => {
    expect(await call("GET", "/v1/acl/policies")).toMatchObject({ status: 400, error: "ACL support disabled" });
    expect(await call("PUT", "/v1/acl/bootstrap")).toMatchObject({ status: 400, error: "ACL support disabled" });
    expect((await call("GET", "/v1/plugins?type=csi")).body).toEqual([]);
    expect((await call("GET", "/v1/volumes?type=csi")).body).toEqual([]);
    expect(await call("GET", "/v1/quotas")).toMatchObject({ status: 501, error: "Nomad Enterprise only endpoint" });
  });
});

describe("node drain and eligibility over HTTP", () => {
  test("PUT /v1/node/:id/drain and /eligibility, with Nomad's answers and errors", async () => {
    const drain = await call<{ NodeModifyIndex: number; EvalIDs: string[] }>("PUT", `/v1/node/${node.ID}/drain`, { DrainSpec: { Deadline: 3_600_000_000_000 } });
    expect(drain.body.NodeModifyIndex).toBeGreaterThan(0);
    const served = (await call<{ Drain: boolean; DrainStrategy: { ForceDeadline: string }; Resources: { CPU: number }; Reserved: { CPU: number } }>("GET", `/v1/node/${node.ID}`)).body;
    expect(served).toMatchObject({ Drain: true, Resources: { CPU: 4000 }, Reserved: { CPU: 0 } });
    expect(served.DrainStrategy.ForceDeadline).not.toBe("0001-01-01T00:00:00Z");
    expect((await call("PUT", `/v1/node/${node.ID}/eligibility`, { Eligibility: "eligible" })).status).toBe(400);
    expect((await call("PUT", `/v1/node/${node.ID}/eligibility`, { Eligibility: "maybe" })).error).toContain('must be "eligible" or "ineligible"');
    const undrained = await call<{ EvalIDs: string[] }>("PUT", `/v1/node/${node.ID}/drain`, { DrainSpec: null, MarkEligible: true });
    expect(undrained.status).toBe(200);
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: false, SchedulingEligibility: "eligible" });
    expect((await call("PUT", "/v1/node/nope/drain", { DrainSpec: null })).status).toBe(404);
  });

  test("the legacy drain form: ?enable=true without a body forces a drain, ?enable=false ends it and marks the node eligible", async () => {
    const drained = await app.request(`/v1/node/${node.ID}/drain?enable=true`, { method: "PUT" });
    expect(drained.status).toBe(200);
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: true, SchedulingEligibility: "ineligible" });
    const ended = await app.request(`/v1/node/${node.ID}/drain?enable=false`, { method: "POST" });
    expect(ended.status).toBe(200);
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: false, SchedulingEligibility: "eligible" });
    const bad = await app.request(`/v1/node/${node.ID}/drain?enable=perhaps`, { method: "PUT" });
    expect([bad.status, await bad.text()]).toEqual([400, "invalid enable value"]);
  });

  test("GET /v1/nodes?os=true&resources=true adds os.name and the node's resources, as Nomad 1.x's list does", async () => {
    const plain = (await call<Record<string, unknown>[]>("GET", "/v1/nodes")).body[0]!;
    expect(plain).not.toHaveProperty("Attributes");
    expect(plain).not.toHaveProperty("NodeResources");
    const full = (await call<{ Attributes: Record<string, string>; NodeResources: { Cpu: { CpuShares: number } }; ReservedResources: { Cpu: { CpuShares: number } } }[]>("GET", "/v1/nodes?os=true&resources=true")).body[0]!;
    expect(full.Attributes).toEqual({ "os.name": node.Attributes["os.name"] ?? "" });
    expect(full.NodeResources.Cpu.CpuShares).toBe(4000);
    expect(full.ReservedResources.Cpu.CpuShares).toBe(0);
    expect((await call("GET", "/v1/nodes?os=maybe")).status).toBe(400);
  });

  test("node allocations carry the legacy Resources the CLI reads", async () => {
    const allocs = (await call<(Allocation & { Resources: { CPU: number; DiskMB: number }; TaskResources: Record<string, { CPU: number }> })[]>("GET", `/v1/node/${node.ID}/allocations`)).body;
    const alloc = allocs.find((candidate) => candidate.JobID === "scaled")!;
    expect(alloc.Resources).toMatchObject({ CPU: 100, MemoryMB: 64, DiskMB: 300 });
    expect(alloc.TaskResources.srv).toMatchObject({ CPU: 100, MemoryMB: 64 });
  });
});

describe("the event stream", () => {
  test("events of each write, filtered by topic and key", async () => {
    const batches = await readEvents(
      "/v1/event/stream?topic=Job:evented&topic=Allocation:evented",
      (seen) => seen.some((batch) => batch.Events.some((event) => event.Topic === "Allocation")),
      () => server.jobs.register(testJob("evented")),
    );
    const events = batches.flatMap((batch) => batch.Events);
    expect(events.map((event) => [event.Topic, event.Type, event.Key === "evented" ? "evented" : "alloc"])).toEqual([
      ["Job", "JobRegistered", "evented"],
      ["Allocation", "PlanResult", "alloc"],
    ]);
    expect(batches[0]!.Index).toBe(server.index);
  });

  test("?index= replays what is still buffered from that index on; a topic with more than one ':' is refused", async () => {
    const from = server.index + 1;
    server.jobs.deregister("evented", false);
    const batches = await readEvents(`/v1/event/stream?topic=Job&index=${from}`, (seen) => seen.length > 0, () => {});
    expect(batches[0]!.Index).toBe(from);
    expect(batches[0]!.Events[0]).toMatchObject({ Topic: "Job", Type: "JobDeregistered", Key: "evented" });
    expect((await call("GET", "/v1/event/stream?topic=a:b:c")).status).toBe(400);
    expect((await call("GET", "/v1/event/stream?index=x")).status).toBe(400);
  });
});
