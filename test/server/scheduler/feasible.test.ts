import { describe, expect, test } from "bun:test";
import { checkOperand } from "../../../src/server/scheduler/feasible/operators.ts";
import { resolveTarget } from "../../../src/server/scheduler/feasible/targets.ts";
import type { Node } from "../../../src/structs/node.ts";
import { openTestServer, testJob, testNode } from "../fixtures.ts";

const node = {
  ...testNode({ ID: "node-1", Name: "box", Attributes: { "kernel.name": "linux", "os.version": "12.4", "cpu.features": "sse,avx, avx2", "driver.raw_exec": "1" }, Meta: { rack: "r1" } }),
  Drain: false,
  Events: [],
  DrainStrategy: null,
  StatusUpdatedAt: 0,
  CreateIndex: 1,
  ModifyIndex: 1,
} satisfies Node;

const check = (l: string, operand: string, r: string) => checkOperand(operand, resolveTarget(l, node), resolveTarget(r, node));

describe("constraint operators against a node", () => {
  test.each([
    ["${attr.kernel.name}", "=", "linux", true],
    ["${attr.kernel.name}", "==", "windows", false],
    ["${attr.kernel.name}", "!=", "windows", true],
    ["${attr.missing}", "!=", "x", true],
    ["${attr.missing}", "=", "x", false],
    ["${meta.rack}", "is", "r1", true],
    ["${node.unique.name}", "=", "box", true],
    ["${node.datacenter}", "=", "dc1", true],
    ["${node.unique.id}", "=", "node-1", true],
    ["${attr.os.version}", "<", "2", true],
    ["${attr.os.version}", ">=", "12.4", true],
    ["${attr.os.version}", "version", ">= 12, < 13", true],
    ["${attr.os.version}", "semver", "> 12.5", false],
    ["${attr.kernel.name}", "regexp", "^lin", true],
    ["${attr.kernel.name}", "regexp", "[", false],
    ["${attr.cpu.features}", "set_contains", "avx,avx2", true],
    ["${attr.cpu.features}", "set_contains_all", "avx,neon", false],
    ["${attr.cpu.features}", "set_contains_any", "neon,sse", true],
    ["${attr.driver.raw_exec}", "is_set", "", true],
    ["${attr.driver.docker}", "is_not_set", "", true],
    ["${attr.kernel.name}", "no_such_operator", "linux", false],
  ])("%s %s %s is %p", (l, operand, r, expected) => {
    expect(check(l, operand, r)).toBe(expected);
  });
});

function setup() {
  const { server } = openTestServer();
  const registered = testNode({ Meta: { rack: "r1" } });
  server.nodes.upsert(registered);
  const live = (jobId: string) => server.nodes.allocations(registered.ID).filter((alloc) => alloc.JobID === jobId && alloc.DesiredStatus === "run");
  return { server, live };
}

describe("placement with constraints, affinities and spreads", () => {
  test("a job whose constraint the node fails gets a placement failure naming it, and waits", () => {
    const { server, live } = setup();
    const job = { ...testJob("win"), Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "windows", Operand: "=" }] };
    const response = server.jobs.register(job);
    expect(live("win")).toHaveLength(0);
    const evaluation = server.evals.get(response.EvalID);
    expect(evaluation.FailedTGAllocs?.web).toMatchObject({ NodesEvaluated: 1, NodesFiltered: 1, ConstraintFiltered: { "${attr.kernel.name} = windows": 1 } });
    expect(server.evals.get(evaluation.BlockedEval).Status).toBe("blocked");
  });

  test("a task's constraint filters the node for its group; one the node meets places", () => {
    const { server, live } = setup();
    const job = testJob("meta", { count: 2 }) as { TaskGroups: { Tasks: Record<string, unknown>[] }[] };
    job.TaskGroups[0]!.Tasks[0]!.Constraints = [{ LTarget: "${meta.rack}", RTarget: "r1", Operand: "=" }];
    server.jobs.register(job);
    expect(live("meta")).toHaveLength(2);

    job.TaskGroups[0]!.Tasks[0]!.Constraints = [{ LTarget: "${meta.rack}", RTarget: "r[2-9]", Operand: "regexp" }];
    const other = server.jobs.register({ ...job, ID: "meta2" });
    expect(server.evals.get(other.EvalID).FailedTGAllocs?.web?.ConstraintFiltered).toEqual({ "${meta.rack} regexp r[2-9]": 1 });
  });

  test("distinct_hosts places one alloc of the group on the one node; the rest fail naming it", () => {
    const { server, live } = setup();
    const job = testJob("dh", { count: 3 }) as { TaskGroups: Record<string, unknown>[] };
    job.TaskGroups[0]!.Constraints = [{ Operand: "distinct_hosts", LTarget: "", RTarget: "" }];
    const response = server.jobs.register(job);
    expect(live("dh")).toHaveLength(1);
    expect(server.evals.get(response.EvalID).FailedTGAllocs?.web).toMatchObject({ ConstraintFiltered: { distinct_hosts: 1 }, CoalescedFailures: 1 });
  });

  test("distinct_property allows as many allocs per value as its limit", () => {
    const { server, live } = setup();
    const job = { ...testJob("dp", { count: 3 }), Constraints: [{ Operand: "distinct_property", LTarget: "${meta.rack}", RTarget: "2" }] };
    const response = server.jobs.register(job);
    expect(live("dp")).toHaveLength(2);
    expect(server.evals.get(response.EvalID).FailedTGAllocs?.web?.ConstraintFiltered).toEqual({ "distinct_property: ${meta.rack}=r1 used by 2 allocs": 1 });
  });

  test("affinities never filter; the score is in the placement metrics; spreads are accepted", () => {
    const { server, live } = setup();
    const job = {
      ...testJob("aff"),
      Affinities: [
        { LTarget: "${meta.rack}", RTarget: "r1", Operand: "=", Weight: 50 },
        { LTarget: "${attr.kernel.name}", RTarget: "windows", Operand: "=", Weight: 50 },
      ],
      Spreads: [{ Attribute: "${node.datacenter}", Weight: 100, SpreadTarget: [] }],
    };
    server.jobs.register(job);
    const [alloc] = live("aff");
    expect(alloc?.Metrics.ScoreMetaData).toEqual([{ NodeID: alloc!.NodeID, Scores: { "node-affinity": 0.5 }, NormScore: 0.5 }]);
  });

  test("a constraint that cannot be checked is refused on register, naming it", () => {
    const { server } = setup();
    const bad = (constraint: Record<string, string>) => () => server.jobs.register({ ...testJob("bad"), Constraints: [constraint] });
    expect(bad({ LTarget: "${attr.x}", RTarget: "[", Operand: "regexp" })).toThrow(/Constraints\[0\]\.RTarget: regular expression failed to compile/);
    expect(bad({ LTarget: "${attr.x}", RTarget: ">= banana", Operand: "version" })).toThrow(/version constraint is invalid: malformed constraint: >= banana/);
    expect(bad({ LTarget: "${attr.x}", RTarget: "1", Operand: "between" })).toThrow(/unknown constraint type "between"/);
    expect(bad({ LTarget: "${attr.x}", RTarget: "", Operand: "=" })).toThrow(/operator "=" requires an RTarget/);
    expect(server.jobs.list()).toHaveLength(0);
  });
});
