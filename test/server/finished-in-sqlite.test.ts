/**
 * Finished work leaves the heap: a dead job's group (job, versions, allocs,
 * evaluations) lives only in SQLite until the GC removes it, and every
 * answer the API gives about it is the same as when it was all in memory.
 * Two servers run the same steps on the same clock: one as shipped, one
 * keeping finished groups in memory; their answers are compared with IDs
 * (random on each) replaced by the order they first appear in.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { jsonText } from "../../src/api/json-body.ts";
import { serverStatePath } from "../../src/state/server/db.ts";
import type { Server } from "../../src/server/server.ts";
import { openTestServer, testJob, testNode } from "./fixtures.ts";

const CHILDREN = 12;
/** The finished jobs: the dispatched children and the scaled batch job. */
const FINISHED = CHILDREN + 1;

const open: Server[] = [];
afterEach(() => {
  for (const server of open.splice(0)) server.close();
});

const ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|dispatch-\d+-[0-9a-f]{8}/g;

/** The scheduler's own run time (Metrics.AllocationTime) differs from run to run. */
const UNTIMED = new Set(["AllocationTime"]);

/** Arrays in an order that does not depend on the random IDs, then IDs numbered as they appear. */
function normalized(answer: unknown): string {
  const sortArrays = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      const items = value.map(sortArrays);
      return items.sort((a, b) => JSON.stringify(a).replace(ID, "id").localeCompare(JSON.stringify(b).replace(ID, "id")));
    }
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, UNTIMED.has(key) ? 0 : sortArrays(item)]));
    }
    return value;
  };
  const seen = new Map<string, number>();
  return JSON.stringify(sortArrays(answer)).replace(ID, (id) => `<${seen.get(id) ?? seen.set(id, seen.size).get(id)}>`);
}

const unordered = (answer: unknown) => JSON.stringify(answer).replace(ID, "id");

/** A server on its own copy of one clock, with a node, a parameterized batch job and a running service job. */
function setup(keepFinishedInMemory: boolean) {
  let now = Date.UTC(2026, 0, 1);
  const { server, dataDir } = openTestServer({ clock: () => now++, keepFinishedInMemory });
  open.push(server);
  const node = testNode();
  server.nodes.upsert(node);
  server.jobs.register({ ...testJob("param", { type: "batch" }), ParameterizedJob: { Payload: "optional", MetaRequired: [], MetaOptional: ["n"] } });
  server.jobs.register(testJob("web"));
  // A batch job with a scaling block that finishes: its policy stays listed while the job is kept.
  const scaled = testJob("scaled", { type: "batch" }) as { TaskGroups: Record<string, unknown>[] };
  scaled.TaskGroups[0]!.Scaling = { Min: 1, Max: 4 };
  server.jobs.register(scaled);
  const scaledAllocs = server.jobs.allocations("scaled");
  server.allocs.updateFromClient(scaledAllocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "complete" })));
  const children: string[] = [];
  for (let n = 0; n < CHILDREN; n++) {
    const { DispatchedJobID } = server.jobs.dispatch("param", { Payload: null, Meta: { n: String(n) } });
    children.push(DispatchedJobID);
    const allocs = server.jobs.allocations(DispatchedJobID);
    server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "running" })));
    server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "complete" })));
  }
  return { server, node, children, dataDir };
}

/** Everything the API (and so the CLI and the UI) answers about the jobs, allocs and evaluations. */
function answers(server: Server, nodeId: string, children: readonly string[]) {
  const allocs = server.allocs.list();
  const evals = server.evals.list();
  return {
    index: server.index,
    tableIndexes: ["jobs", "allocs", "evals", "nodes", "deployments"].map((table) => server.tableIndex(table as "jobs")),
    jobs: server.jobs.list(),
    children: children.map((id) => ({
      job: server.jobs.get(id),
      allocations: server.jobs.allocations(id),
      evaluations: server.jobs.evaluations(id),
      summary: server.jobs.summary(id),
      versions: server.jobs.versions(id),
    })),
    parentSummary: server.jobs.summary("param"),
    allocs,
    allocInfo: allocs.map((alloc) => server.allocs.get(alloc.ID)),
    evals,
    evalInfo: evals.map((evaluation) => ({ evaluation: server.evals.get(evaluation.ID), allocations: server.evals.allocations(evaluation.ID) })),
    nodeAllocs: server.nodes.allocations(nodeId),
    // Search answers list IDs in ID order, which differs between the servers: compared as sets of shapes.
    search: unordered(server.search.prefixSearch("param", "all")),
    searchAll: unordered(server.search.prefixSearch("", "all")),
    // The lists' bodies as the API sends them (a finished object's text is the stored one, not made again).
    bodies: [server.jobs.list(), allocs, evals].map((list) => JSON.parse(jsonText(list)) as unknown),
    scalingPolicies: server.scalingPolicies.list({ job: "", type: "", inNamespace: () => true }),
    fuzzy: unordered(server.fuzzySearch.search({ text: "param", contexts: server.fuzzySearch.contexts("all"), prefix: "", variables: [], visible: () => true })),
  };
}

describe("finished jobs live in SQLite, not in memory", () => {
  test("a finished dispatched job's group leaves memory; the running ones stay", () => {
    const { server } = setup(false);
    const tiers = server.stateTiers;
    expect(tiers.jobs).toEqual({ inMemory: 2, onlyStored: FINISHED });
    expect(tiers.allocs).toEqual({ inMemory: 1, onlyStored: FINISHED });
    expect(tiers.evals.onlyStored).toBe(FINISHED);
    expect(tiers.versions.onlyStored).toBe(FINISHED);
    // The same steps with finished groups kept in memory: nothing only stored.
    const { server: kept } = setup(true);
    expect(Object.values(kept.stateTiers).every((tier) => tier.onlyStored === 0)).toBe(true);
  });

  test("every answer about them is the same as with everything in memory", () => {
    const a = setup(false);
    const b = setup(true);
    expect(normalized(answers(a.server, a.node.ID, a.children))).toBe(normalized(answers(b.server, b.node.ID, b.children)));
  });

  test("the in-process client's watch leaves them out but still knows them, so their alloc dirs stay", () => {
    const { server, node, children } = setup(false);
    const live = server.nodes.liveAllocations(node.ID);
    expect(live.map((alloc) => alloc.JobID)).toEqual(["web"]);
    const finished = server.jobs.allocations(children[0]!)[0]!;
    expect(server.allocs.exists(finished.ID)).toBe(true);
    expect(server.allocs.exists("00000000-0000-0000-0000-000000000000")).toBe(false);
  });

  test("a write that needs a finished job brings it back: purge, then system gc, answer as with everything in memory", () => {
    const a = setup(false);
    const b = setup(true);
    for (const { server, children } of [a, b]) {
      // Lists first: a finished job's list stub is kept, and must not outlive the change below.
      answers(server, a.node.ID, children);
      server.jobs.deregister(children[0]!, true);
      server.jobs.dispatch("param", { Payload: null, Meta: { n: "again" } });
    }
    expect(normalized(answers(a.server, a.node.ID, a.children.slice(1)))).toBe(normalized(answers(b.server, b.node.ID, b.children.slice(1))));
    for (const { server } of [a, b]) expect(server.collectGarbage(true).jobs).toBe(FINISHED - 1);
    expect(normalized(answers(a.server, a.node.ID, []))).toBe(normalized(answers(b.server, b.node.ID, [])));
    expect(a.server.stateTiers.jobs.onlyStored).toBe(0);
  });

  test("a write whose finished job cannot be read back fails and leaves the job finished, listed and only stored", () => {
    const { server, children, dataDir } = setup(false);
    const child = children[0]!;
    const listedBefore = jsonText(server.jobs.list());
    const tiersBefore = server.stateTiers;
    // A row SQLite returns but that fails its check (as after a bad disk sector): bringing the group back fails.
    const db = new Database(serverStatePath(dataDir));
    db.run("UPDATE evaluations SET body = '{}' WHERE job_id = ?", [child]);
    db.close();
    expect(() => server.jobs.deregister(child, true)).toThrow(/evaluation/);
    expect(jsonText(server.jobs.list())).toBe(listedBefore);
    expect(server.jobs.get(child)?.Status).toBe("dead");
    expect(server.stateTiers).toEqual(tiersBefore);
  });

  test("a write refused after bringing a finished job back leaves it only stored again", () => {
    const { server } = setup(false);
    const tiersBefore = server.stateTiers;
    const scaled = testJob("scaled", { type: "batch" }) as { TaskGroups: Record<string, unknown>[] };
    scaled.TaskGroups[0]!.Scaling = { Min: 1, Max: 4 };
    // The check reads the finished job (back into memory), then refuses the write.
    expect(() => server.jobs.register(scaled, { enforceIndex: true, jobModifyIndex: 1 })).toThrow(/conflicting job modify index/);
    expect(server.stateTiers).toEqual(tiersBefore);
  });

  test("a node evaluation still evaluates every job with an alloc on the node, finished ones too (as Nomad does)", () => {
    const a = setup(false);
    const b = setup(true);
    for (const { server, node, children } of [a, b]) {
      answers(server, node.ID, children);
      server.nodes.evaluate(node.ID);
    }
    expect(a.server.evals.list()).toHaveLength(b.server.evals.list().length);
    expect(normalized(answers(a.server, a.node.ID, a.children))).toBe(normalized(answers(b.server, b.node.ID, b.children)));
    // Evaluated and finished again: back out of memory.
    expect(a.server.stateTiers.jobs.onlyStored).toBe(FINISHED);
  });

  test("after a restart they stay out of memory, with the same answers", () => {
    const a = setup(false);
    const about = (server: Server) => normalized(answers(server, a.node.ID, a.children).children);
    const before = about(a.server);
    a.server.close();
    const { server } = openTestServer({ dataDir: a.dataDir });
    open.push(server);
    expect(server.stateTiers.jobs.onlyStored).toBe(FINISHED);
    expect(about(server)).toBe(before);
  });

  test("rows an older drover wrote, without a list stub, answer the same after a restart", () => {
    const a = setup(false);
    // A restart's own evaluations (the service job's deployment) differ: only the finished children are compared.
    const finished = new Set(a.children);
    const about = (server: Server) =>
      normalized({
        allocs: JSON.parse(jsonText(server.allocs.list().filter((alloc) => finished.has(alloc.JobID)))) as unknown,
        jobs: JSON.parse(jsonText(server.jobs.list().filter((job) => finished.has(job.ID)))) as unknown,
      });
    const before = about(a.server);
    a.server.close();
    const db = new Database(serverStatePath(a.dataDir));
    db.run("UPDATE allocations SET stub = NULL");
    db.close();
    const { server } = openTestServer({ dataDir: a.dataDir });
    open.push(server);
    expect(server.stateTiers.allocs.onlyStored).toBe(FINISHED);
    expect(about(server)).toBe(before);
  });
});
