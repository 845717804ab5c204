/**
 * System and sysbatch jobs on drover's one node, as Nomad's system scheduler
 * places them: one alloc per group on each ready node of the job's
 * datacenters, whatever the count; none where the constraints say no (and
 * no failure for it); updated in place or replaced on the same node;
 * stopped with the job; placed again once the node is eligible again.
 * A sysbatch alloc runs to completion once per node and version.
 */
import { describe, expect, test } from "bun:test";
import { isAllocTerminal } from "../../../src/structs/alloc.ts";
import { oneNodeServer, testJob, testNode } from "../fixtures.ts";

const SECOND_NS = 1e9;

function setup() {
  const parts = oneNodeServer();
  /** Told to run and not finished: what the node runs (a failed system alloc keeps desired "run", as in Nomad). */
  const running = (jobId: string) => parts.allocsOf(jobId).filter((alloc) => !isAllocTerminal(alloc));
  return { ...parts, running };
}

describe("system jobs", () => {
  test("one alloc per group on the node, whatever the count, with no deployment; the job runs", () => {
    const { server, running } = setup();
    const response = server.jobs.register(testJob("agent", { type: "system", count: 3, groups: ["logs", "metrics"] }));
    expect(running("agent").map((alloc) => alloc.Name).sort()).toEqual(["agent.logs[0]", "agent.metrics[0]"]);
    expect(server.evals.get(response.EvalID)).toMatchObject({ Type: "system", Status: "complete", FailedTGAllocs: null });
    expect(server.deployments.ofJob("agent", true)).toEqual([]);
    expect(server.jobs.get("agent").Status).toBe("running");
  });

  test("job plan says what the system scheduler would do: one placement per node, not count", () => {
    const { server, running } = setup();
    const plan = server.jobs.plan(testJob("agent", { type: "system", count: 3 }), false);
    expect(plan.Annotations.DesiredTGUpdates.web).toMatchObject({ Place: 1 });
    expect(running("agent")).toEqual([]);
  });

  test("a node the constraints rule out gets nothing, and that is no failure; the job still runs", () => {
    const { server, running } = setup();
    const job = { ...testJob("linux-only", { type: "system" }), Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "windows", Operand: "=" }] };
    const response = server.jobs.register(job);
    expect(running("linux-only")).toEqual([]);
    expect(server.evals.get(response.EvalID)).toMatchObject({ Status: "complete", FailedTGAllocs: null, BlockedEval: "" });
    expect(server.jobs.get("linux-only").Status).toBe("running");
  });

  test("no room is a failure that waits in a blocked evaluation", () => {
    const { server, running } = setup();
    const response = server.jobs.register(testJob("huge", { type: "system", memory: 100_000 }));
    expect(running("huge")).toEqual([]);
    const evaluation = server.evals.get(response.EvalID);
    expect(evaluation.FailedTGAllocs?.web?.DimensionExhausted).toEqual({ memory: 1 });
    expect(server.evals.get(evaluation.BlockedEval).Status).toBe("blocked");
  });

  test("an update replaces the alloc on the same node; a count change alone changes nothing", () => {
    const { server, node, running, allocsOf, report } = setup();
    server.jobs.register(testJob("agent", { type: "system" }));
    const [first] = running("agent");
    report([first!], "running");
    server.jobs.register(testJob("agent", { type: "system", count: 5 }));
    expect(running("agent").map((alloc) => alloc.ID)).toEqual([first!.ID]);
    server.jobs.register(testJob("agent", { type: "system", memory: 128 }));
    const [second] = running("agent");
    expect(second).toMatchObject({ NodeID: node.ID, Name: "agent.web[0]", PreviousAllocation: first!.ID });
    expect(allocsOf("agent").find((alloc) => alloc.ID === first!.ID)).toMatchObject({ DesiredStatus: "stop", NextAllocation: second!.ID });
  });

  test("a failed alloc stays failed (no reschedule policy) until the job is evaluated again; stopping the job stops it", () => {
    const { server, node, running, report } = setup();
    server.jobs.register(testJob("agent", { type: "system" }));
    const [first] = running("agent");
    report([first!], "failed");
    // Nomad's e2e TestRescheduling_System_NoReschedule: only failed allocs.
    expect(running("agent")).toEqual([]);
    server.nodes.evaluate(node.ID);
    const [replacement] = running("agent");
    expect(replacement).toMatchObject({ PreviousAllocation: first!.ID });
    server.jobs.deregister("agent", false);
    expect(running("agent")).toEqual([]);
    expect(server.jobs.get("agent").Status).toBe("dead");
  });

  test("a drain stops system allocs after the others, unless it ignores system jobs; eligible again, they come back", () => {
    const { server, node, running, allocsOf, report } = setup();
    server.jobs.register(testJob("agent", { type: "system" }));
    server.jobs.register(testJob("work", { type: "batch" }));
    report([...running("agent"), ...running("work")], "running");

    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 3600 * SECOND_NS, IgnoreSystemJobs: false }, MarkEligible: false });
    // The batch alloc waits for the deadline; the system alloc waits for it.
    expect(running("agent")).toHaveLength(1);
    report(running("work"), "complete");
    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 3600 * SECOND_NS, IgnoreSystemJobs: false }, MarkEligible: false });
    expect(running("agent")).toEqual([]);
    report(allocsOf("agent").filter((alloc) => alloc.ClientStatus === "running"), "complete");
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: false, SchedulingEligibility: "ineligible" });

    server.nodes.updateEligibility(node.ID, "eligible");
    expect(running("agent")).toHaveLength(1);

    report(running("agent"), "running");
    server.nodes.updateDrain(node.ID, { DrainSpec: { Deadline: 3600 * SECOND_NS, IgnoreSystemJobs: true }, MarkEligible: false });
    expect(running("agent")).toHaveLength(1);
    expect(server.nodes.get(node.ID)).toMatchObject({ Drain: false, DrainStrategy: null });
  });

  test("a node that registers later, or comes back ready, gets the system job", () => {
    const { server, node, running } = setup();
    server.nodes.updateStatus(node.ID, "down");
    server.jobs.register(testJob("agent", { type: "system" }));
    expect(running("agent")).toEqual([]);
    server.nodes.updateStatus(node.ID, "ready");
    expect(running("agent")).toHaveLength(1);
    const second = testNode({ Name: "second" });
    server.nodes.upsert(second);
    expect(server.nodes.allocations(second.ID).map((alloc) => alloc.Name)).toEqual(["agent.web[0]"]);
  });
});

describe("sysbatch jobs", () => {
  test("run to completion once per node; not again until the job changes", () => {
    const { server, node, running, allocsOf, report } = setup();
    server.jobs.register(testJob("once", { type: "sysbatch" }));
    const [first] = running("once");
    report([first!], "complete");
    // Anything that evaluates the job again (here the node) leaves the finished alloc alone.
    server.nodes.evaluate(node.ID);
    expect(allocsOf("once")).toHaveLength(1);
    expect(server.jobs.get("once").Status).toBe("dead");

    server.jobs.register(testJob("once", { type: "sysbatch", memory: 128 }));
    const [second] = running("once").filter((alloc) => alloc.ClientStatus === "pending");
    expect(second).toMatchObject({ NodeID: node.ID, PreviousAllocation: first!.ID });
    report([second!], "failed");
    server.nodes.evaluate(node.ID);
    // A failed sysbatch alloc is not run again either: it ran once at this version.
    expect(allocsOf("once")).toHaveLength(2);
  });
});
