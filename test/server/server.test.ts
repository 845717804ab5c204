import { describe, expect, test } from "bun:test";
import { clientEndpoint } from "../../src/server/client-endpoint.ts";
import { ServerError } from "../../src/server/errors.ts";
import { ValidationError } from "../../src/lib/validation.ts";
import { allocIndex, type Allocation } from "../../src/structs/alloc.ts";
import { openTestServer, testJob, testNode } from "./fixtures.ts";

const HTTP_PORT = { Mode: "host", DynamicPorts: [{ Label: "http" }], ReservedPorts: [] };

function setup(node = testNode(), options: Parameters<typeof openTestServer>[0] = {}) {
  const { server, dataDir } = openTestServer(options);
  const client = clientEndpoint(server);
  server.upsertNode(node);
  const live = (jobId: string) => server.nodeAllocations(node.ID).filter((alloc) => alloc.JobID === jobId && alloc.DesiredStatus === "run");
  const report = (allocs: readonly Allocation[], status: "running" | "complete" | "failed") =>
    server.updateAllocations(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: status })));
  return { server, client, node, dataDir, live, report };
}

describe("placement", () => {
  test("count allocs are placed on the node with their resources and distinct dynamic ports", () => {
    const { server, node, live } = setup();
    const response = server.registerJob(testJob("web", { count: 5, cpu: 200, memory: 64, ports: HTTP_PORT }));
    const allocs = live("web");
    expect(allocs.map((alloc) => alloc.Name).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `web.web[${i}]`));
    for (const alloc of allocs) {
      expect(alloc).toMatchObject({ NodeID: node.ID, EvalID: response.EvalID, ClientStatus: "pending", DesiredStatus: "run", CreateIndex: response.Index });
      expect(alloc.AllocatedResources.Tasks.srv).toEqual({ Cpu: { CpuShares: 200 }, Memory: { MemoryMB: 64, MemoryMaxMB: 0 }, Networks: null });
      expect(alloc.AllocatedResources.Shared.DiskMB).toBe(300);
      expect(alloc.Job.ID).toBe("web");
    }
    const ports = allocs.map((alloc) => alloc.AllocatedResources.Shared.Ports[0]!);
    expect(new Set(ports.map((port) => port.Value)).size).toBe(5);
    for (const port of ports) {
      expect(port).toMatchObject({ Label: "http", HostIP: "127.0.0.1" });
      expect(port.Value).toBeGreaterThanOrEqual(20000);
      expect(port.Value).toBeLessThanOrEqual(32000);
    }
    expect(server.job("web")).toMatchObject({ Status: "running", Version: 0, JobModifyIndex: response.JobModifyIndex });
  });

  test("what does not fit waits with its reason and is placed when room frees up", () => {
    const { server, live, report } = setup(testNode({ NodeResources: { ...testNode().NodeResources, Memory: { MemoryMB: 1000 } } }));
    const response = server.registerJob(testJob("big", { count: 3, memory: 400 }));
    expect(live("big")).toHaveLength(2);
    const evaluation = server.evaluation(response.EvalID);
    expect(evaluation.FailedTGAllocs?.web).toMatchObject({ NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: { memory: 1 } });
    expect(server.evaluation(evaluation.BlockedEval)).toMatchObject({ Status: "blocked", QueuedAllocations: { web: 1 } });
    expect(server.jobSummary("big").Summary.web).toMatchObject({ Queued: 1, Starting: 2 });

    // A running alloc frees nothing; a finished one frees its memory.
    report(live("big"), "running");
    expect(live("big")).toHaveLength(2);
    report(live("big").slice(0, 1), "complete");
    expect(live("big").filter((alloc) => alloc.ClientStatus === "pending")).toHaveLength(1);
    expect(server.evaluation(evaluation.BlockedEval).Status).toBe("complete");
    expect(server.jobSummary("big").Summary.web).toMatchObject({ Queued: 0, Complete: 1, Running: 1, Starting: 1 });
  });

  test("node reservations count against capacity", () => {
    const base = testNode();
    const { server, live } = setup({ ...base, ReservedResources: { ...base.ReservedResources, Cpu: { CpuShares: 3900 } } });
    server.registerJob(testJob("cpu", { count: 2, cpu: 100 }));
    expect(live("cpu")).toHaveLength(1);
  });

  test("a static port is never given twice; a dynamic one skips ports bound on the host", () => {
    const bound = new Set<number>();
    for (let port = 20000; port <= 20010; port++) if (port !== 20004) bound.add(port);
    const node = testNode();
    node.NodeResources = { ...node.NodeResources, MinDynamicPort: 20000, MaxDynamicPort: 20010 };
    node.ReservedResources = { ...node.ReservedResources, Networks: { ReservedHostPorts: "8081" } };
    const { server, live, report } = setup(node, { hostBoundPorts: () => bound });
    server.registerJob(testJob("dyn", { ports: HTTP_PORT }));
    expect(live("dyn")[0]!.AllocatedResources.Shared.Ports[0]!.Value).toBe(20004);
    const second = server.registerJob(testJob("dyn2", { ports: HTTP_PORT }));
    expect(server.evaluation(second.EvalID).FailedTGAllocs?.web?.DimensionExhausted).toEqual({ "network: dynamic port selection failed": 1 });

    const staticPort = { Mode: "host", ReservedPorts: [{ Label: "http", Value: 8080 }], DynamicPorts: [] };
    server.registerJob(testJob("a", { ports: staticPort }));
    const b = server.registerJob(testJob("b", { ports: staticPort }));
    expect(live("a")[0]!.AllocatedResources.Shared.Ports[0]!.Value).toBe(8080);
    expect(live("b")).toHaveLength(0);
    expect(server.evaluation(b.EvalID).FailedTGAllocs?.web?.DimensionExhausted).toEqual({ "network: reserved port collision http=8080": 1 });
    const reserved = server.registerJob(testJob("c", { ports: { ...staticPort, ReservedPorts: [{ Label: "x", Value: 8081 }] } }));
    expect(server.evaluation(reserved.EvalID).FailedTGAllocs?.web?.DimensionExhausted).toEqual({ "network: reserved port collision x=8081": 1 });

    // Stopping "a" frees 8080 only once its client reports it finished.
    server.deregisterJob("a", false);
    expect(live("b")).toHaveLength(0);
    report(server.nodeAllocations(node.ID).filter((alloc) => alloc.JobID === "a"), "complete");
    expect(live("b")[0]!.AllocatedResources.Shared.Ports[0]!.Value).toBe(8080);
  });

  test("a task whose driver the node lacks is not placed, and says why", () => {
    const node = testNode();
    node.Drivers = { ...node.Drivers, raw_exec: { Detected: false, Healthy: false, HealthDescription: "disabled", Attributes: {} } };
    const { server } = setup(node);
    const response = server.registerJob(testJob("nodriver"));
    expect(server.evaluation(response.EvalID).FailedTGAllocs?.web).toMatchObject({ NodesFiltered: 1, ConstraintFiltered: { "missing drivers": 1 } });
    expect(server.job("nodriver").Status).toBe("pending");
  });

  test("jobs registered before any node are placed when the node registers", () => {
    const { server } = openTestServer();
    server.registerJob(testJob("early", { count: 2 }));
    expect(server.allocations()).toHaveLength(0);
    const node = testNode();
    server.upsertNode(node);
    expect(server.nodeAllocations(node.ID)).toHaveLength(2);
  });
});

describe("job lifecycle", () => {
  test("an update makes a new version; changed groups are replaced, linked to the allocs they replace", () => {
    const { server, live } = setup();
    server.registerJob(testJob("web", { count: 2, groups: ["web", "api"] }));
    const before = new Map(server.allocations().map((alloc) => [alloc.ID, alloc]));
    // Unchanged resubmission: no new version, nothing moves.
    const same = server.registerJob(testJob("web", { count: 2, groups: ["web", "api"] }));
    expect(server.job("web").Version).toBe(0);
    expect(same.JobModifyIndex).toBe(server.job("web").JobModifyIndex);

    const job = testJob("web", { count: 2, groups: ["web", "api"] }) as { TaskGroups: { Name: string; Tasks: { Resources: { MemoryMB: number } }[] }[] };
    job.TaskGroups[0]!.Tasks[0]!.Resources.MemoryMB = 128; // "web" changes, "api" does not
    const update = server.registerJob(job);
    expect(server.job("web")).toMatchObject({ Version: 1, JobModifyIndex: update.Index });
    expect(server.jobVersions("web").map((version) => version.Version)).toEqual([1, 0]);

    const stopped = server.allocations().filter((alloc) => alloc.DesiredStatus === "stop");
    expect(stopped.map((alloc) => alloc.TaskGroup)).toEqual(["web", "web"]);
    expect(stopped.every((alloc) => alloc.DesiredDescription === "alloc is being updated due to job update")).toBe(true);
    const webNow = live("web").filter((alloc) => alloc.TaskGroup === "web");
    expect(webNow.map((alloc) => alloc.PreviousAllocation).sort()).toEqual(stopped.map((alloc) => alloc.ID).sort());
    for (const alloc of webNow) {
      expect(alloc.Job.Version).toBe(1);
      expect(allocIndex(alloc.Name)).toBe(allocIndex(before.get(alloc.PreviousAllocation)!.Name));
      expect(server.allocation(alloc.PreviousAllocation).NextAllocation).toBe(alloc.ID);
    }
    // The unchanged group is updated in place: same allocs, new job version.
    const api = live("web").filter((alloc) => alloc.TaskGroup === "api");
    expect(api.every((alloc) => before.has(alloc.ID) && alloc.Job.Version === 1 && alloc.AllocModifyIndex === update.Index)).toBe(true);
  });

  test("count changes stop the highest indexes and place the missing ones", () => {
    const { server, live } = setup();
    server.registerJob(testJob("c", { count: 3 }));
    server.registerJob(testJob("c", { count: 1 }));
    expect(live("c").map((alloc) => alloc.Name)).toEqual(["c.web[0]"]);
    server.registerJob(testJob("c", { count: 2 }));
    expect(live("c").map((alloc) => alloc.Name).sort()).toEqual(["c.web[0]", "c.web[1]"]);
    // The new web[1] follows the web[1] stopped by the scale-down.
    const [, second] = live("c").sort((a, b) => a.Name.localeCompare(b.Name));
    expect(server.allocation(second!.PreviousAllocation).Name).toBe("c.web[1]");
  });

  test("stop keeps the job as a stopped version; purge removes it and GC collects its finished allocs", () => {
    const { server, live, report } = setup();
    server.registerJob(testJob("s", { count: 2 }));
    const allocs = live("s");
    report(allocs, "running");
    const stop = server.deregisterJob("s", false);
    expect(server.job("s")).toMatchObject({ Stop: true, Version: 1, Status: "dead", JobModifyIndex: stop.JobModifyIndex });
    expect(live("s")).toHaveLength(0);
    expect(server.allocation(allocs[0]!.ID)).toMatchObject({ DesiredStatus: "stop", DesiredDescription: "alloc not needed due to job update" });

    server.deregisterJob("s", true);
    expect(() => server.job("s")).toThrow(ServerError);
    expect(() => server.deregisterJob("s", true)).toThrow(/job "s" not found/);
    // Still running on the client: kept. Finished: collected.
    expect(server.collectGarbage(true).allocs).toBe(0);
    report(allocs, "complete");
    expect(server.collectGarbage(true)).toMatchObject({ allocs: 2 });
    expect(server.allocations()).toHaveLength(0);
  });

  test("a purged job's ID can be registered again without inheriting its allocs", () => {
    const { server, live } = setup();
    server.registerJob(testJob("again"));
    server.deregisterJob("again", true);
    server.registerJob(testJob("again"));
    expect(server.job("again").Version).toBe(0);
    expect(live("again")).toHaveLength(1);
    expect(live("again")[0]!.PreviousAllocation).toBe("");
    expect(server.jobAllocations("again")).toHaveLength(1);
  });

  test("stopping an alloc places a replacement that follows it", () => {
    const { server, live } = setup();
    server.registerJob(testJob("a"));
    const [first] = live("a");
    const response = server.stopAllocation(first!.ID);
    const [replacement] = live("a");
    expect(replacement!.ID).not.toBe(first!.ID);
    expect(replacement).toMatchObject({ PreviousAllocation: first!.ID, EvalID: response.EvalID, Name: first!.Name });
    expect(server.allocation(first!.ID)).toMatchObject({ DesiredStatus: "stop", NextAllocation: replacement!.ID });
  });

  test("batch allocs that completed are not run again", () => {
    const { server, live, report } = setup();
    server.registerJob(testJob("b", { type: "batch", count: 2 }));
    report(live("b"), "complete");
    expect(server.job("b").Status).toBe("dead");
    server.registerJob(testJob("b", { type: "batch", count: 2 }));
    expect(server.allocations()).toHaveLength(2);
  });

  test("bad jobs are refused naming the field; conflicting index and foreign region too", () => {
    const { server } = setup();
    const bad = testJob("bad", { memory: 1 });
    expect(() => server.registerJob(bad)).toThrow(ValidationError);
    expect(() => server.registerJob(bad)).toThrow('Job.TaskGroups["web"].Tasks["srv"].Resources.MemoryMB: expected at least 10, got 1');
    expect(() => server.registerJob({ ...testJob("r"), Region: "mars" })).toThrow('job region "mars" is not this agent\'s region "global"');
    server.registerJob(testJob("e"));
    expect(() => server.registerJob(testJob("e", { count: 2 }), { enforceIndex: true, jobModifyIndex: 1 })).toThrow(/conflicting job modify index/);
    expect(server.allocations().filter((alloc) => alloc.JobID === "e")).toHaveLength(1);
  });
});

describe("durability", () => {
  test("a reopened server has the same state and keeps counting indexes", () => {
    const { server, dataDir, node } = setup();
    server.registerJob(testJob("p", { count: 2, ports: HTTP_PORT }));
    server.deregisterJob("p", false);
    server.registerJob(testJob("q"));
    const jobs = server.jobs();
    const allocs = server.nodeAllocations(node.ID);
    const index = server.index;
    server.close();

    const { server: reopened } = openTestServer({ dataDir });
    expect(reopened.index).toBe(index);
    expect(reopened.jobs()).toEqual(jobs);
    expect(reopened.nodeAllocations(node.ID)).toEqual(allocs);
    expect(reopened.jobVersions("p").map((version) => version.Stop)).toEqual([true, false]);
    expect(reopened.registerJob(testJob("r")).Index).toBe(index + 1);
    reopened.close();
  });

  test("with too little free disk a register is refused and changes nothing", () => {
    let free = 1e12;
    const { server } = setup(testNode(), { freeBytes: () => free });
    server.registerJob(testJob("ok"));
    const index = server.index;
    free = 1024 * 1024;
    expect(() => server.registerJob(testJob("full"))).toThrow(/cannot register the job: only 1 MB free on the disk holding .*; nothing was changed/);
    expect(server.index).toBe(index);
    expect(() => server.job("full")).toThrow(ServerError);
    // Reports on running allocs still land.
    const [alloc] = server.allocations();
    server.updateAllocations([{ ID: alloc!.ID, ClientStatus: "running" }]);
    expect(server.allocation(alloc!.ID).ClientStatus).toBe("running");
  });
});
