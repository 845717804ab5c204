/**
 * The server GC's age thresholds (server { job_gc_threshold, eval_gc_threshold,
 * batch_eval_gc_threshold, deployment_gc_threshold, node_gc_threshold }):
 * an object older than its threshold is gone after a pass, a younger one
 * stays. Time is the server's injected clock, moved by the test.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { loadAgentConfig } from "../../src/config/load.ts";
import { DEFAULT_GC_THRESHOLDS, type GcThresholds } from "../../src/server/gc.ts";
import { gcThresholdsOf } from "../../src/agent/gc-thresholds.ts";
import type { Server } from "../../src/server/server.ts";
import type { Allocation } from "../../src/structs/alloc.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/index.ts";
import { ALL_AT_ONCE, openTestServer, testJob, testNode } from "./fixtures.ts";

const MINUTE = 60_000;
const THRESHOLDS: GcThresholds = { job: 40 * MINUTE, eval: 10 * MINUTE, batchEval: 20 * MINUTE, deployment: 30 * MINUTE, node: 50 * MINUTE };

const open: Server[] = [];
afterEach(() => {
  for (const server of open.splice(0)) server.close();
});

/** A one-node server on a clock the test moves. */
function setup() {
  let now = Date.UTC(2026, 0, 1);
  const { server } = openTestServer({ clock: () => now, gcThresholds: THRESHOLDS });
  open.push(server);
  const node = testNode();
  server.nodes.upsert(node);
  const allocsOf = (jobId: string) => server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === jobId);
  const report = (allocs: readonly Allocation[], status: "running" | "complete") => server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: status })));
  const advance = (ms: number) => {
    now += ms;
  };
  /** A pass at the threshold's edge keeps it; one just past it removes it. */
  const exists = (fn: () => unknown) => {
    try {
      fn();
      return true;
    } catch {
      return false;
    }
  };
  return { server, node, allocsOf, report, advance, exists };
}

describe("GC thresholds", () => {
  test("job_gc_threshold: a dead job stays until it is older than the threshold, then goes with its allocs and evals", () => {
    const { server, allocsOf, report, advance, exists } = setup();
    server.jobs.register(testJob("done", { type: "batch" }));
    const allocs = allocsOf("done");
    report(allocs, "complete");
    expect(server.jobs.get("done").Status).toBe("dead");
    advance(THRESHOLDS.job);
    server.collectGarbage();
    expect(server.jobs.get("done").Status).toBe("dead");
    expect(server.jobs.allocations("done")).toHaveLength(1);
    advance(1);
    expect(server.collectGarbage().jobs).toBe(1);
    expect(exists(() => server.jobs.get("done"))).toBe(false);
    expect(exists(() => server.allocs.get(allocs[0]!.ID))).toBe(false);
    expect(server.evals.list().filter((evaluation) => evaluation.JobID === "done")).toHaveLength(0);
  });

  test("eval_gc_threshold: a service job's superseded evaluation and stopped alloc go once older than it", () => {
    const { server, allocsOf, report, advance } = setup();
    server.jobs.register(testJob("svc", { update: ALL_AT_ONCE }));
    const [first] = server.jobs.evaluations("svc");
    report(allocsOf("svc"), "running");
    server.jobs.register(testJob("svc", { update: ALL_AT_ONCE, memory: 65 }));
    report(allocsOf("svc").filter((alloc) => alloc.DesiredStatus === "stop"), "complete");
    advance(THRESHOLDS.eval);
    server.collectGarbage();
    expect(server.jobs.evaluations("svc").map((evaluation) => evaluation.ID)).toContain(first!.ID);
    expect(server.jobs.allocations("svc")).toHaveLength(2);
    advance(1);
    const removed = server.collectGarbage();
    expect(removed).toMatchObject({ evals: 1, allocs: 1 });
    expect(server.jobs.evaluations("svc").map((evaluation) => evaluation.ID)).not.toContain(first!.ID);
    expect(server.jobs.allocations("svc")).toHaveLength(1);
  });

  test("batch_eval_gc_threshold: a batch job's evaluations stay while it is not stopped, then go once older than it", () => {
    const { server, allocsOf, report, advance } = setup();
    server.jobs.register(testJob("b", { type: "batch" }));
    server.jobs.register(testJob("b", { type: "batch", memory: 65 }));
    expect(server.jobs.evaluations("b")).toHaveLength(2);
    advance(THRESHOLDS.batchEval + 1);
    server.collectGarbage();
    // Past both thresholds, but the job is alive: Nomad keeps a batch job's evaluations.
    expect(server.jobs.evaluations("b")).toHaveLength(2);

    // Stopped: its finished evaluations go once older than batch_eval_gc_threshold, not eval_gc_threshold.
    server.jobs.register(testJob("s", { type: "batch" }));
    server.jobs.register(testJob("s", { type: "batch", memory: 65 }));
    server.jobs.deregister("s", false);
    report(allocsOf("s"), "complete");
    expect(server.jobs.evaluations("s")).toHaveLength(3);
    advance(THRESHOLDS.eval + 1);
    server.collectGarbage();
    expect(server.jobs.evaluations("s")).toHaveLength(3);
    advance(THRESHOLDS.batchEval - THRESHOLDS.eval);
    server.collectGarbage();
    // The last one stays with its job (job_gc_threshold removes both).
    expect(server.jobs.evaluations("s")).toHaveLength(1);
  });

  test("deployment_gc_threshold: a finished deployment that is not the job's latest goes once older than it", () => {
    const { server, advance } = setup();
    server.jobs.register(testJob("d"));
    const [first] = server.deployments.list();
    server.jobs.register(testJob("d", { memory: 65 }));
    expect(server.deployments.list()).toHaveLength(2);
    expect(server.deployments.get(first!.ID).Status).not.toBe("running");
    advance(THRESHOLDS.deployment);
    server.collectGarbage();
    expect(server.deployments.list()).toHaveLength(2);
    advance(1);
    expect(server.collectGarbage().deployments).toBe(1);
    expect(server.deployments.list().map((deployment) => deployment.ID)).not.toContain(first!.ID);
  });

  test("node_gc_threshold: a down node with nothing live stays listed until it is older than the threshold", () => {
    const { server, advance } = setup();
    const gone = testNode({ Name: "gone" });
    server.nodes.upsert(gone);
    server.nodes.updateStatus(gone.ID, "down");
    // StatusUpdatedAt counts whole seconds: start the wait on the next one.
    advance(1000);
    advance(THRESHOLDS.node - 1000);
    server.collectGarbage();
    expect(server.nodes.list().map((node) => node.ID)).toContain(gone.ID);
    advance(1000);
    expect(server.collectGarbage().nodes).toBe(1);
    expect(server.nodes.list().map((node) => node.ID)).not.toContain(gone.ID);
  });

  test("a forced pass (system gc) ignores the ages", () => {
    const { server, allocsOf, report } = setup();
    server.jobs.register(testJob("now", { type: "batch" }));
    report(allocsOf("now"), "complete");
    expect(server.collectGarbage(true).jobs).toBe(1);
  });
});

describe("GC config keys", () => {
  const dir = tempDir();
  const load = (text: string) => {
    const path = join(dir, `${Math.random()}.hcl`);
    writeFileSync(path, text);
    return loadAgentConfig({ dev: false, configPaths: [path] });
  };

  test("default to Nomad's values", async () => {
    const { config } = await loadAgentConfig({ dev: false, configPaths: [] });
    expect(config.server.job_gc_interval).toBe(5 * MINUTE);
    expect(gcThresholdsOf(config.server)).toEqual(DEFAULT_GC_THRESHOLDS);
  });

  test("are read from the server block", async () => {
    const { config } = await load(
      `server {\n  job_gc_interval = "30s"\n  job_gc_threshold = "40m"\n  eval_gc_threshold = "10m"\n  batch_eval_gc_threshold = "20m"\n  deployment_gc_threshold = "30m"\n  node_gc_threshold = "50m"\n}`,
    );
    expect(config.server.job_gc_interval).toBe(30_000);
    expect(gcThresholdsOf(config.server)).toEqual(THRESHOLDS);
  });

  for (const key of ["job_gc_interval", "job_gc_threshold", "eval_gc_threshold", "batch_eval_gc_threshold", "deployment_gc_threshold", "node_gc_threshold"]) {
    test(`${key}: a bad or zero duration is refused by name`, async () => {
      await expect(load(`server {\n  ${key} = "soon"\n}`)).rejects.toThrow(new RegExp(`server\\.${key}`));
      await expect(load(`server {\n  ${key} = "0s"\n}`)).rejects.toThrow(new RegExp(`server\\.${key}: must be a duration above zero`));
    });
  }
});
