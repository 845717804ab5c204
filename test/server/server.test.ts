import { describe, expect, test } from "bun:test";
import { clientEndpoint } from "../../src/server/client-endpoint.ts";
import { ServerError } from "../../src/server/errors.ts";
import { ValidationError } from "../../src/lib/validation.ts";
import { allocIndex, type Allocation } from "../../src/structs/alloc.ts";
import { ALL_AT_ONCE, openTestServer, testJob, testNode } from "./fixtures.ts";

const HTTP_PORT = { Mode: "host", DynamicPorts: [{ Label: "http" }], ReservedPorts: [] };

function setup(node = testNode(), options: Parameters<typeof openTestServer>[0] = {}) {
  const { server, dataDir } = openTestServer(options);
  const client = clientEndpoint(server);
  server.nodes.upsert(node);
  const live = (jobId: string) => server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === jobId && alloc.DesiredStatus === "run");
  const report = (allocs: readonly Allocation[], status: "running" | "complete" | "failed") =>
    server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: status })));
  return { server, client, node, dataDir, live, report };
}

describe("placement", () => {
  test("count allocs are placed on the node with their resources and distinct dynamic ports", () => {
    const { server, node, live } = setup();
    const response = server.jobs.register(testJob("web", { count: 5, cpu: 200, memory: 64, ports: HTTP_PORT }));
    const allocs = live("web");
    expect(allocs.map((alloc) => alloc.Name).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `web.web[${i}]`));
    for (const alloc of allocs) {
      expect(alloc).toMatchObject({ NodeID: node.ID, EvalID: response.EvalID, ClientStatus: "pending", DesiredStatus: "run", CreateIndex: response.Index });
      expect(alloc.AllocatedResources.Tasks.srv).toEqual({ Cpu: { CpuShares: 200 }, Memory: { MemoryMB: 64, MemoryMaxMB: 0 }, Networks: null, Devices: [] });
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
    expect(server.jobs.get("web")).toMatchObject({ Status: "running", Version: 0, JobModifyIndex: response.JobModifyIndex });
  });

  test("what does not fit waits with its reason and is placed when room frees up", () => {
    const { server, live, report } = setup(testNode({ NodeResources: { ...testNode().NodeResources, Memory: { MemoryMB: 1000 } } }));
    const response = server.jobs.register(testJob("big", { count: 3, memory: 400 }));
    expect(live("big")).toHaveLength(2);
    const evaluation = server.evals.get(response.EvalID);
    expect(evaluation.FailedTGAllocs?.web).toMatchObject({ NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: { memory: 1 } });
    expect(server.evals.get(evaluation.BlockedEval)).toMatchObject({ Status: "blocked", QueuedAllocations: { web: 1 } });
    expect(server.jobs.summary("big").Summary.web).toMatchObject({ Queued: 1, Starting: 2 });

    // A running alloc frees nothing; a finished one frees its memory.
    report(live("big"), "running");
    expect(live("big")).toHaveLength(2);
    report(live("big").slice(0, 1), "complete");
    expect(live("big").filter((alloc) => alloc.ClientStatus === "pending")).toHaveLength(1);
    expect(server.evals.get(evaluation.BlockedEval).Status).toBe("complete");
    expect(server.jobs.summary("big").Summary.web).toMatchObject({ Queued: 0, Complete: 1, Running: 1, Starting: 1 });
  });

  test("node reservations count against capacity", () => {
    const base = testNode();
    const { server, live } = setup({ ...base, ReservedResources: { ...base.ReservedResources, Cpu: { CpuShares: 3900 } } });
    server.jobs.register(testJob("cpu", { count: 2, cpu: 100 }));
    expect(live("cpu")).toHaveLength(1);
  });

  test("a static port is never given twice; a dynamic one skips ports bound on the host", () => {
    const bound = new Set<number>();
    for (let port = 20000; port <= 20010; port++) if (port !== 20004) bound.add(port);
    const node = testNode();
    node.NodeResources = { ...node.NodeResources, MinDynamicPort: 20000, MaxDynamicPort: 20010 };
    node.ReservedResources = { ...node.ReservedResources, Networks: { ReservedHostPorts: "8081" } };
    const { server, live, report } = setup(node, { hostBoundPorts: () => bound });
    server.jobs.register(testJob("dyn", { ports: HTTP_PORT }));
    expect(live("dyn")[0]!.AllocatedResources.Shared.Ports[0]!.Value).toBe(20004);
    const second = server.jobs.register(testJob("dyn2", { ports: HTTP_PORT }));
    expect(server.evals.get(second.EvalID).FailedTGAllocs?.web?.DimensionExhausted).toEqual({ "network: dynamic port selection failed": 1 });

    const staticPort = { Mode: "host", ReservedPorts: [{ Label: "http", Value: 8080 }], DynamicPorts: [] };
    server.jobs.register(testJob("a", { ports: staticPort }));
    const b = server.jobs.register(testJob("b", { ports: staticPort }));
    expect(live("a")[0]!.AllocatedResources.Shared.Ports[0]!.Value).toBe(8080);
    expect(live("b")).toHaveLength(0);
    expect(server.evals.get(b.EvalID).FailedTGAllocs?.web?.DimensionExhausted).toEqual({ "network: reserved port collision http=8080": 1 });
    const reserved = server.jobs.register(testJob("c", { ports: { ...staticPort, ReservedPorts: [{ Label: "x", Value: 8081 }] } }));
    expect(server.evals.get(reserved.EvalID).FailedTGAllocs?.web?.DimensionExhausted).toEqual({ "network: reserved port collision x=8081": 1 });

    // Stopping "a" frees 8080 only once its client reports it finished.
    server.jobs.deregister("a", false);
    expect(live("b")).toHaveLength(0);
    report(server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === "a"), "complete");
    expect(live("b")[0]!.AllocatedResources.Shared.Ports[0]!.Value).toBe(8080);
  });

  test("a bridge group goes only to a node with Nomad's bridge network, and says why not", () => {
    const bridgePort = { ...HTTP_PORT, Mode: "bridge" };
    const without = setup();
    const refused = without.server.jobs.register(testJob("br", { ports: bridgePort }));
    expect(without.server.evals.get(refused.EvalID).FailedTGAllocs?.web).toMatchObject({ NodesFiltered: 1, ConstraintFiltered: { "missing network": 1 } });
    const base = testNode();
    const withBridge = setup({ ...base, NodeResources: { ...base.NodeResources, Networks: [...base.NodeResources.Networks, { Mode: "bridge", Device: "nomad", CIDR: "", IP: "" }] } });
    withBridge.server.jobs.register(testJob("br", { ports: bridgePort }));
    const placed = withBridge.live("br");
    expect(placed).toHaveLength(1);
    // Ports are bound on the host network's address, not the bridge's.
    expect(placed[0]!.AllocatedResources.Shared.Ports[0]!.HostIP).toBe(base.NodeResources.Networks[0]!.IP || "127.0.0.1");
  });

  test("a task whose driver the node lacks is not placed, and says why", () => {
    const node = testNode();
    node.Drivers = { ...node.Drivers, raw_exec: { Detected: false, Healthy: false, HealthDescription: "disabled", Attributes: {} } };
    const { server } = setup(node);
    const response = server.jobs.register(testJob("nodriver"));
    expect(server.evals.get(response.EvalID).FailedTGAllocs?.web).toMatchObject({ NodesFiltered: 1, ConstraintFiltered: { 'missing driver "raw_exec"': 1 } });
    expect(server.jobs.get("nodriver").Status).toBe("pending");
  });

  test("a task whose driver is unhealthy is not placed, and the driver's reason is given", () => {
    const node = testNode();
    node.Drivers = { ...node.Drivers, raw_exec: { Detected: true, Healthy: false, HealthDescription: "needs root", Attributes: {} } };
    const { server } = setup(node);
    const response = server.jobs.register(testJob("sick"));
    expect(server.evals.get(response.EvalID).FailedTGAllocs?.web?.ConstraintFiltered).toEqual({ 'driver "raw_exec" unhealthy: needs root': 1 });
  });

  test("jobs registered before any node are placed when the node registers", () => {
    const { server } = openTestServer();
    server.jobs.register(testJob("early", { count: 2 }));
    expect(server.allocs.list()).toHaveLength(0);
    const node = testNode();
    server.nodes.upsert(node);
    expect(server.nodes.allocations(node.ID)).toHaveLength(2);
  });
});

describe("job lifecycle", () => {
  test("an update makes a new version; changed groups are replaced, linked to the allocs they replace", () => {
    const { server, live } = setup();
    server.jobs.register(testJob("web", { count: 2, groups: ["web", "api"], update: ALL_AT_ONCE }));
    const before = new Map(server.allocs.list().map((alloc) => [alloc.ID, alloc]));
    // Unchanged resubmission: no new version, nothing moves.
    const same = server.jobs.register(testJob("web", { count: 2, groups: ["web", "api"], update: ALL_AT_ONCE }));
    expect(server.jobs.get("web").Version).toBe(0);
    expect(same.JobModifyIndex).toBe(server.jobs.get("web").JobModifyIndex);

    const job = testJob("web", { count: 2, groups: ["web", "api"], update: ALL_AT_ONCE }) as { TaskGroups: { Name: string; Tasks: { Resources: { MemoryMB: number } }[] }[] };
    job.TaskGroups[0]!.Tasks[0]!.Resources.MemoryMB = 128; // "web" changes, "api" does not
    const update = server.jobs.register(job);
    expect(server.jobs.get("web")).toMatchObject({ Version: 1, JobModifyIndex: update.Index });
    expect(server.jobs.versions("web").map((version) => version.Version)).toEqual([1, 0]);

    const stopped = server.allocs.list().filter((alloc) => alloc.DesiredStatus === "stop");
    expect(stopped.map((alloc) => alloc.TaskGroup)).toEqual(["web", "web"]);
    expect(stopped.every((alloc) => alloc.DesiredDescription === "alloc is being updated due to job update")).toBe(true);
    const webNow = live("web").filter((alloc) => alloc.TaskGroup === "web");
    expect(webNow.map((alloc) => alloc.PreviousAllocation).sort()).toEqual(stopped.map((alloc) => alloc.ID).sort());
    for (const alloc of webNow) {
      expect(alloc.Job.Version).toBe(1);
      expect(allocIndex(alloc.Name)).toBe(allocIndex(before.get(alloc.PreviousAllocation)!.Name));
      expect(server.allocs.get(alloc.PreviousAllocation).NextAllocation).toBe(alloc.ID);
    }
    // The unchanged group is updated in place: same allocs, new job version.
    const api = live("web").filter((alloc) => alloc.TaskGroup === "api");
    expect(api.every((alloc) => before.has(alloc.ID) && alloc.Job.Version === 1 && alloc.AllocModifyIndex === update.Index)).toBe(true);
  });

  test("count changes stop the highest indexes and place the missing ones", () => {
    const { server, live } = setup();
    server.jobs.register(testJob("c", { count: 3 }));
    server.jobs.register(testJob("c", { count: 1 }));
    expect(live("c").map((alloc) => alloc.Name)).toEqual(["c.web[0]"]);
    server.jobs.register(testJob("c", { count: 2 }));
    expect(live("c").map((alloc) => alloc.Name).sort()).toEqual(["c.web[0]", "c.web[1]"]);
    // The new web[1] follows the web[1] stopped by the scale-down.
    const [, second] = live("c").sort((a, b) => a.Name.localeCompare(b.Name));
    expect(server.allocs.get(second!.PreviousAllocation).Name).toBe("c.web[1]");
  });

  test("stop keeps the job as a stopped version; purge removes it, and its allocs as soon as they finish", () => {
    const { server, live, report } = setup();
    server.jobs.register(testJob("s", { count: 2 }));
    const allocs = live("s");
    report(allocs, "running");
    const stop = server.jobs.deregister("s", false);
    expect(server.jobs.get("s")).toMatchObject({ Stop: true, Version: 1, Status: "dead", JobModifyIndex: stop.JobModifyIndex });
    expect(live("s")).toHaveLength(0);
    expect(server.allocs.get(allocs[0]!.ID)).toMatchObject({ DesiredStatus: "stop", DesiredDescription: "alloc not needed due to job update" });

    server.jobs.deregister("s", true);
    expect(() => server.jobs.get("s")).toThrow(ServerError);
    // Nomad 1.x: already gone is success, with no evaluation.
    expect(server.jobs.deregister("s", true)).toEqual({ EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 });
    // Still running on the client: kept. Finished: gone with the client's report, no GC pass needed.
    expect(server.collectGarbage(true).allocs).toBe(0);
    report(allocs, "complete");
    expect(server.allocs.list()).toHaveLength(0);
  });

  test("purging a job whose allocs already finished removes them at once", () => {
    const { server, live, report } = setup();
    server.jobs.register(testJob("done"));
    const allocs = live("done");
    server.jobs.deregister("done", false);
    report(allocs, "complete");
    expect(server.allocs.list().filter((alloc) => alloc.JobID === "done")).toHaveLength(1);
    server.jobs.deregister("done", true);
    expect(server.allocs.list().filter((alloc) => alloc.JobID === "done")).toHaveLength(0);
  });

  test("a purged job's ID can be registered again without inheriting its allocs", () => {
    const { server, live } = setup();
    server.jobs.register(testJob("again"));
    server.jobs.deregister("again", true);
    server.jobs.register(testJob("again"));
    expect(server.jobs.get("again").Version).toBe(0);
    expect(live("again")).toHaveLength(1);
    expect(live("again")[0]!.PreviousAllocation).toBe("");
    expect(server.jobs.allocations("again")).toHaveLength(1);
  });

  test("stopping an alloc places a replacement that follows it", () => {
    const { server, live } = setup();
    server.jobs.register(testJob("a"));
    const [first] = live("a");
    const response = server.allocs.stop(first!.ID);
    const [replacement] = live("a");
    expect(replacement!.ID).not.toBe(first!.ID);
    expect(replacement).toMatchObject({ PreviousAllocation: first!.ID, EvalID: response.EvalID, Name: first!.Name });
    expect(server.allocs.get(first!.ID)).toMatchObject({ DesiredStatus: "stop", NextAllocation: replacement!.ID });
  });

  test("batch allocs that completed are not run again", () => {
    const { server, live, report } = setup();
    server.jobs.register(testJob("b", { type: "batch", count: 2 }));
    report(live("b"), "complete");
    expect(server.jobs.get("b").Status).toBe("dead");
    server.jobs.register(testJob("b", { type: "batch", count: 2 }));
    expect(server.allocs.list()).toHaveLength(2);
  });

  test("bad jobs are refused naming the field; conflicting index and foreign region too", () => {
    const { server } = setup();
    const bad = testJob("bad", { memory: 1 });
    expect(() => server.jobs.register(bad)).toThrow(ValidationError);
    expect(() => server.jobs.register(bad)).toThrow('Job.TaskGroups["web"].Tasks["srv"].Resources.MemoryMB: expected at least 10, got 1');
    expect(() => server.jobs.register({ ...testJob("r"), Region: "mars" })).toThrow('job region "mars" is not this agent\'s region "global"');
    server.jobs.register(testJob("e"));
    expect(() => server.jobs.register(testJob("e", { count: 2 }), { enforceIndex: true, jobModifyIndex: 1 })).toThrow(/conflicting job modify index/);
    expect(server.allocs.list().filter((alloc) => alloc.JobID === "e")).toHaveLength(1);
  });
});

describe("durability", () => {
  test("a reopened server has the same state and keeps counting indexes", () => {
    const { server, dataDir, node } = setup();
    server.jobs.register(testJob("p", { count: 2, ports: HTTP_PORT }));
    server.jobs.deregister("p", false);
    server.jobs.register(testJob("q"));
    const jobs = server.jobs.list();
    const allocs = server.nodes.allocations(node.ID);
    const index = server.index;
    server.close();

    const { server: reopened } = openTestServer({ dataDir });
    expect(reopened.index).toBe(index);
    expect(reopened.jobs.list()).toEqual(jobs);
    expect(reopened.nodes.allocations(node.ID)).toEqual(allocs);
    expect(reopened.jobs.versions("p").map((version) => version.Stop)).toEqual([true, false]);
    expect(reopened.jobs.register(testJob("r")).Index).toBe(index + 1);
    reopened.close();
  });

  test("with too little free disk a register is refused and changes nothing", () => {
    let free = 1e12;
    const { server } = setup(testNode(), { freeBytes: () => free });
    server.jobs.register(testJob("ok"));
    const index = server.index;
    free = 1024 * 1024;
    expect(() => server.jobs.register(testJob("full"))).toThrow(/cannot register the job: only 1 MB free on the disk holding .*; nothing was changed/);
    expect(server.index).toBe(index);
    expect(() => server.jobs.get("full")).toThrow(ServerError);
    // Reports on running allocs still land.
    const [alloc] = server.allocs.list();
    server.allocs.updateFromClient([{ ID: alloc!.ID, ClientStatus: "running" }]);
    expect(server.allocs.get(alloc!.ID).ClientStatus).toBe("running");
  });
});

describe("alloc lists", () => {
  test("a listed alloc keeps its stub until it changes; a change shows in the next list", () => {
    const { server, report, live } = setup();
    server.jobs.register(testJob("stubs", { count: 3 }));
    const first = server.allocs.list();
    const second = server.allocs.list();
    expect(second.map((stub, i) => stub === first[i])).toEqual([true, true, true]);
    report(live("stubs").filter((alloc) => alloc.ID === first[0]!.ID), "running");
    const third = server.allocs.list();
    const changed = third.find((stub) => stub.ID === first[0]!.ID)!;
    expect(changed.ClientStatus).toBe("running");
    expect(third.filter((stub) => first.includes(stub))).toHaveLength(2);
    expect(Object.isFrozen(changed)).toBe(true);
  });
});
