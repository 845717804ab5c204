import { describe, expect, test } from "bun:test";
import { DRAIN_COMPLETE, MIGRATING } from "../../../src/server/drain/drainer.ts";
import { NODE_EVENT } from "../../../src/server/endpoints/node.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";
import { waitFor } from "../../helpers/index.ts";
import { ALL_AT_ONCE, openTestServer, testJob, testNode } from "../fixtures.ts";

const SECOND_NS = 1e9;

function setup() {
  const { server, dataDir } = openTestServer();
  const node = testNode();
  server.nodes.upsert(node);
  const allocsOf = (jobId: string) => server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === jobId);
  const report = (allocs: readonly Allocation[], status: "running" | "complete") =>
    server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: status })));
  /** The client's health verdict on allocs outside a deployment (by the group's migrate block). */
  const judged = (allocs: readonly Allocation[], healthy: boolean) =>
    server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "running" as const, DeploymentStatus: { Healthy: healthy, Timestamp: new Date().toISOString() } })));
  /** The client's side of a stop: what the server told to stop has finished. */
  const finishStopped = () => report(server.nodes.allocations(node.ID).filter((alloc) => alloc.DesiredStatus === "stop" && alloc.ClientStatus === "running"), "complete");
  const events = () => server.nodes.get(node.ID).Events.map((event) => event.Message);
  return { server, node, dataDir, allocsOf, report, judged, finishStopped, events };
}

describe("node drain", () => {
  test("service allocs move max_parallel (1) per group at a time; replacements wait; the drain completes", () => {
    const { server, node, allocsOf, judged, finishStopped, events } = setup();
    server.jobs.register(testJob("svc", { count: 3, update: ALL_AT_ONCE }));
    judged(allocsOf("svc"), true);

    const response = server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 3600 * SECOND_NS, IgnoreSystemJobs: false }, MarkEligible: false });
    expect(response.NodeModifyIndex).toBe(response.Index);
    const drained = server.nodes.get(node.ID);
    expect(drained).toMatchObject({ Drain: true, SchedulingEligibility: "ineligible", DrainStrategy: { Deadline: 3600 * SECOND_NS, IgnoreSystemJobs: false } });
    expect(Date.parse(drained.DrainStrategy!.ForceDeadline!) - Date.parse(drained.DrainStrategy!.StartedAt)).toBe(3_600_000);

    for (let moved = 1; moved <= 3; moved++) {
      const migrating = allocsOf("svc").filter((alloc) => alloc.DesiredTransition.Migrate);
      expect(migrating).toHaveLength(moved);
      expect(migrating.every((alloc) => alloc.DesiredStatus === "stop" && alloc.DesiredDescription === MIGRATING)).toBe(true);
      // Replacements cannot go anywhere while the only node drains: they wait.
      expect(allocsOf("svc").filter((alloc) => alloc.DesiredStatus === "run" && alloc.ClientStatus === "pending")).toHaveLength(0);
      finishStopped();
    }
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: false, DrainStrategy: null, SchedulingEligibility: "ineligible" });
    expect(events()).toEqual([
      "Node registered",
      NODE_EVENT.drainSet,
      "Migrating 1 allocation(s); 2 more to migrate",
      "Migrating 1 allocation(s); 1 more to migrate",
      "Migrating 1 allocation(s); 0 more to migrate",
      DRAIN_COMPLETE,
    ]);
    expect(server.jobs.summary("svc").Summary.web!.Queued).toBe(3);

    // Eligible again: what waited is placed.
    const eligible = server.nodes.updateDrain(node.ID, { DrainSpec: null, MarkEligible: true });
    expect(eligible.EvalIDs).toHaveLength(1);
    expect(allocsOf("svc").filter((alloc) => alloc.DesiredStatus === "run")).toHaveLength(3);
  });

  test("migrate's health: an alloc whose health is still being judged is not moved until it is healthy; an unhealthy one goes at once", () => {
    const { server, node, allocsOf, report, judged } = setup();
    const job = testJob("health", { count: 2, update: ALL_AT_ONCE }) as { TaskGroups: Record<string, unknown>[] };
    job.TaskGroups[0]!.Migrate = { MaxParallel: 2 };
    server.jobs.register(job);
    const [first, second] = allocsOf("health");
    report([first!, second!], "running");
    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 3600 * SECOND_NS, IgnoreSystemJobs: false }, MarkEligible: false });
    expect(allocsOf("health").filter((alloc) => alloc.DesiredTransition.Migrate)).toHaveLength(0);
    judged([first!], false);
    expect(allocsOf("health").filter((alloc) => alloc.DesiredTransition.Migrate).map((alloc) => alloc.ID)).toEqual([first!.ID]);
    judged([second!], true);
    expect(allocsOf("health").filter((alloc) => alloc.DesiredTransition.Migrate)).toHaveLength(2);
  });

  test("a forced drain (negative deadline) migrates everything at once, batch allocs included", () => {
    const { server, node, allocsOf, report, finishStopped } = setup();
    server.jobs.register(testJob("svc", { count: 2 }));
    server.jobs.register(testJob("once", { type: "batch" }));
    report([...allocsOf("svc"), ...allocsOf("once")], "running");
    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: -1, IgnoreSystemJobs: false }, MarkEligible: false });
    expect(server.nodes.allocations(node.ID).every((alloc) => alloc.DesiredTransition.Migrate === true)).toBe(true);
    finishStopped();
    expect(server.nodes.get(node.ID).DrainStrategy).toBeNull();
  });

  test("batch allocs stay until the deadline; the deadline timer then migrates them", async () => {
    const { server, node, allocsOf, report, finishStopped, events } = setup();
    server.jobs.register(testJob("once", { type: "batch" }));
    report(allocsOf("once"), "running");
    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 0.2 * SECOND_NS, IgnoreSystemJobs: false }, MarkEligible: false });
    expect(allocsOf("once")[0]!.DesiredStatus).toBe("run");
    await waitFor("the deadline to migrate the batch alloc", () => allocsOf("once")[0]!.DesiredTransition.Migrate === true);
    expect(events()).toContain("Drain deadline reached: migrating the 1 remaining allocation(s)");
    finishStopped();
    const complete = server.nodes.get(node.ID).Events.at(-1)!;
    expect(complete).toMatchObject({ Message: DRAIN_COMPLETE, Subsystem: "Drain", Details: { deadline_reached: "true" } });
  });

  test("a drain with no deadline waits for batch allocs to finish on their own", () => {
    const { server, node, allocsOf, report } = setup();
    server.jobs.register(testJob("once", { type: "batch" }));
    report(allocsOf("once"), "running");
    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false }, MarkEligible: false });
    expect(server.nodes.get(node.ID).DrainStrategy!.ForceDeadline).toBeNull();
    expect(allocsOf("once")[0]!.DesiredStatus).toBe("run");
    report(allocsOf("once"), "complete");
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: false, DrainStrategy: null });
  });

  test("eligibility: refused while draining; kept (with the drain) when the client registers again", () => {
    const { server, node } = setup();
    server.nodes.updateEligibility(node.ID, "ineligible");
    server.nodes.upsert({ ...node, Name: "renamed" });
    expect(server.nodes.get(node.ID)).toMatchObject({ Name: "renamed", SchedulingEligibility: "ineligible" });
    server.jobs.register(testJob("waits"));
    expect(server.nodes.allocations(node.ID)).toHaveLength(0);
    server.nodes.updateEligibility(node.ID, "eligible");
    expect(server.nodes.allocations(node.ID)).toHaveLength(1);

    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false }, MarkEligible: false });
    expect(() => server.nodes.updateEligibility(node.ID, "eligible")).toThrow("can not set node's scheduling eligibility to eligible while it is draining");
    server.nodes.upsert(node);
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: true, SchedulingEligibility: "ineligible" });
  });

  test("a drain whose deadline passed while the server was down ends when it opens", async () => {
    const { server, node, dataDir, allocsOf, report } = setup();
    server.jobs.register(testJob("once", { type: "batch" }));
    report(allocsOf("once"), "running");
    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 0.1 * SECOND_NS, IgnoreSystemJobs: false }, MarkEligible: false });
    const deadline = Date.parse(server.nodes.get(node.ID).DrainStrategy!.ForceDeadline!);
    server.close();
    expect(allocsOf("once")[0]!.DesiredTransition.Migrate).toBeNull();
    await waitFor("the deadline to pass", () => Date.now() > deadline);
    const { server: reopened } = openTestServer({ dataDir });
    expect(reopened.nodes.allocations(node.ID)[0]!.DesiredTransition.Migrate).toBe(true);
    reopened.close();
  });
});
