import { describe, expect, test } from "bun:test";
import type { Allocation } from "../../../src/structs/alloc.ts";
import { waitFor } from "../../helpers/index.ts";
import { openTestServer, testJob, testNode } from "../fixtures.ts";

const SECOND_NS = 1e9;

function setup() {
  const { server, dataDir } = openTestServer();
  const node = testNode();
  server.nodes.upsert(node);
  const live = (jobId: string) => server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === jobId && alloc.DesiredStatus === "run");
  /** The client's reports: running, and healthy (or not) for the alloc's deployment. */
  const health = (allocs: readonly Allocation[], healthy: boolean) =>
    server.allocs.updateFromClient(
      allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "running" as const, DeploymentStatus: { Healthy: healthy, Timestamp: new Date().toISOString() }, DeploymentID: alloc.DeploymentID })),
    );
  const running = (allocs: readonly Allocation[]) => server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "running" as const })));
  return { server, node, dataDir, live, health, running };
}

/** A service job whose group has `update`, running `version` (a meta change makes a new one). */
function job(id: string, count: number, update: Record<string, unknown>, version = "1") {
  const spec = testJob(id, { count, meta: { version } }) as { TaskGroups: Record<string, unknown>[] };
  spec.TaskGroups[0]!.Update = { MinHealthyTime: 0, HealthyDeadline: 60 * SECOND_NS, ProgressDeadline: 120 * SECOND_NS, ...update };
  return spec;
}

const byVersion = (allocs: readonly Allocation[], version: number) => allocs.filter((alloc) => alloc.Job.Version === version);

describe("deployments", () => {
  test("a new version rolls max_parallel at a time, each batch once the last is healthy; then successful and stable", () => {
    const { server, live, health } = setup();
    server.jobs.register(job("roll", 5, { MaxParallel: 2 }));
    const first = server.deployments.latestOfJob("roll")!;
    expect(first).toMatchObject({ JobVersion: 0, Status: "running", TaskGroups: { web: { DesiredTotal: 5, PlacedAllocs: 5 } } });
    health(live("roll"), true);
    expect(server.deployments.get(first.ID)).toMatchObject({ Status: "successful", StatusDescription: "Deployment completed successfully" });
    expect(server.jobs.get("roll").Stable).toBe(true);

    server.jobs.register(job("roll", 5, { MaxParallel: 2 }, "2"));
    const second = server.deployments.latestOfJob("roll")!;
    expect(second.ID).not.toBe(first.ID);
    expect(second.TaskGroups.web).toMatchObject({ DesiredTotal: 5, PlacedAllocs: 2 });
    const seen: number[] = [];
    for (let round = 0; round < 5 && server.deployments.get(second.ID).Status === "running"; round++) {
      const fresh = byVersion(live("roll"), 1).filter((alloc) => alloc.DeploymentStatus?.Healthy !== true);
      seen.push(fresh.length);
      // Never fewer than count - max_parallel of the allocs told to run are the old, healthy ones or new healthy ones.
      expect(live("roll").filter((alloc) => alloc.DeploymentStatus?.Healthy === true || alloc.Job.Version === 0).length).toBeGreaterThanOrEqual(3);
      health(fresh, true);
    }
    expect(seen).toEqual([2, 2, 1]);
    expect(server.deployments.get(second.ID)).toMatchObject({ Status: "successful", TaskGroups: { web: { HealthyAllocs: 5, PlacedAllocs: 5 } } });
    expect(live("roll").every((alloc) => alloc.Job.Version === 1 && alloc.DeploymentID === second.ID)).toBe(true);
    expect(server.jobs.versions("roll").map((version) => version.Stable)).toEqual([true, true]);
  });

  test("canaries go beside the old allocs; auto_promote promotes them once healthy and the rest rolls", () => {
    const { server, live, health } = setup();
    server.jobs.register(job("can", 3, { MaxParallel: 1, Canary: 1, AutoPromote: true }));
    health(live("can"), true);
    server.jobs.register(job("can", 3, { MaxParallel: 1, Canary: 1, AutoPromote: true }, "2"));
    const deployment = server.deployments.latestOfJob("can")!;
    expect(deployment).toMatchObject({ StatusDescription: "Deployment is running pending automatic promotion", TaskGroups: { web: { DesiredCanaries: 1, Promoted: false } } });
    const canaries = byVersion(live("can"), 1);
    expect(canaries).toHaveLength(1);
    expect(canaries[0]!.DeploymentStatus).toMatchObject({ Canary: true, Healthy: null });
    expect(byVersion(live("can"), 0)).toHaveLength(3);
    expect(deployment.TaskGroups.web!.PlacedCanaries).toEqual([canaries[0]!.ID]);

    health(canaries, true);
    expect(server.deployments.get(deployment.ID).TaskGroups.web!.Promoted).toBe(true);
    // The old alloc sharing the canary's name went; one more is being replaced.
    expect(byVersion(live("can"), 0)).toHaveLength(1);
    while (server.deployments.get(deployment.ID).Status === "running") health(byVersion(live("can"), 1).filter((alloc) => alloc.DeploymentStatus?.Healthy !== true), true);
    expect(server.deployments.get(deployment.ID).Status).toBe("successful");
    expect(live("can").map((alloc) => alloc.Name).sort()).toEqual(["can.web[0]", "can.web[1]", "can.web[2]"]);
    expect(live("can").every((alloc) => alloc.Job.Version === 1)).toBe(true);
  });

  test("without auto_promote the deployment waits; promote is refused until the canaries are healthy", () => {
    const { server, live, health } = setup();
    server.jobs.register(job("man", 2, { MaxParallel: 1, Canary: 1 }));
    health(live("man"), true);
    server.jobs.register(job("man", 2, { MaxParallel: 1, Canary: 1 }, "2"));
    const deployment = server.deployments.latestOfJob("man")!;
    expect(deployment.StatusDescription).toBe("Deployment is running but requires manual promotion");
    expect(() => server.deployments.promote(deployment.ID, true, [])).toThrow('Task group "web" has 0/1 healthy allocations');
    health(byVersion(live("man"), 1), true);
    expect(server.deployments.get(deployment.ID).TaskGroups.web!.Promoted).toBe(false);
    const response = server.deployments.promote(deployment.ID, true, []);
    expect(response.EvalID).not.toBe("");
    expect(server.deployments.get(deployment.ID)).toMatchObject({ StatusDescription: "Deployment is running", TaskGroups: { web: { Promoted: true } } });
    expect(() => server.deployments.promote(deployment.ID, true, [])).toThrow("no canaries to promote");
  });

  test("an unhealthy alloc fails the deployment; auto_revert registers the last stable version again", () => {
    const { server, live, health } = setup();
    server.jobs.register(job("rev", 2, { MaxParallel: 1, AutoRevert: true }));
    health(live("rev"), true);
    expect(server.jobs.get("rev").Stable).toBe(true);
    server.jobs.register(job("rev", 2, { MaxParallel: 1, AutoRevert: true }, "bad"));
    const failing = server.deployments.latestOfJob("rev")!;
    health(byVersion(live("rev"), 1), false);
    expect(server.deployments.get(failing.ID)).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations - rolling back to job version 0" });
    const reverted = server.jobs.get("rev");
    expect(reverted).toMatchObject({ Version: 2, Meta: { version: "1" } });
    expect(server.deployments.latestOfJob("rev")!.JobVersion).toBe(2);
  });

  test("the operator fails a deployment; a paused one places nothing until resumed", () => {
    const { server, live, health } = setup();
    server.jobs.register(job("op", 3, { MaxParallel: 1 }));
    health(live("op"), true);
    server.jobs.register(job("op", 3, { MaxParallel: 1 }, "2"));
    const deployment = server.deployments.latestOfJob("op")!;
    server.deployments.pause(deployment.ID, true);
    expect(server.deployments.get(deployment.ID)).toMatchObject({ Status: "paused", StatusDescription: "Deployment is paused" });
    health(byVersion(live("op"), 1), true);
    expect(byVersion(live("op"), 1)).toHaveLength(1);
    server.deployments.pause(deployment.ID, false);
    expect(byVersion(live("op"), 1)).toHaveLength(2);
    server.deployments.fail(deployment.ID);
    expect(server.deployments.get(deployment.ID)).toMatchObject({ Status: "failed", StatusDescription: "Deployment marked as failed" });
    expect(() => server.deployments.fail(deployment.ID)).toThrow("can't fail terminal deployment");
  });

  test("a newer version cancels the running deployment; a deployment without progress fails at its deadline", async () => {
    const { server, live, running } = setup();
    server.jobs.register(job("dl", 1, { MaxParallel: 1, HealthyDeadline: 0.05 * SECOND_NS, ProgressDeadline: 0.1 * SECOND_NS }));
    const first = server.deployments.latestOfJob("dl")!;
    server.jobs.register(job("dl", 1, { MaxParallel: 1, HealthyDeadline: 0.05 * SECOND_NS, ProgressDeadline: 0.1 * SECOND_NS }, "2"));
    expect(server.deployments.get(first.ID)).toMatchObject({ Status: "cancelled", StatusDescription: "Cancelled due to newer version of job" });
    running(live("dl"));
    const second = server.deployments.latestOfJob("dl")!;
    await waitFor("the progress deadline to fail the deployment", () => server.deployments.get(second.ID).Status === "failed");
    expect(server.deployments.get(second.ID).StatusDescription).toBe("Failed due to progress deadline");
  });

  test("deployments and stable versions survive a restart", () => {
    const { server, live, health, dataDir } = setup();
    server.jobs.register(job("keep", 1, { MaxParallel: 1 }));
    health(live("keep"), true);
    server.jobs.setStable("keep", 0, false);
    const deployment = server.deployments.latestOfJob("keep")!;
    server.close();
    const { server: reopened } = openTestServer({ dataDir });
    expect(reopened.deployments.get(deployment.ID)).toEqual(deployment);
    expect(reopened.jobs.get("keep").Stable).toBe(false);
    expect(reopened.deployments.ofJob("keep", false).map((item) => item.ID)).toEqual([deployment.ID]);
    reopened.close();
  });

  test("garbage collection: finished deployments but a job's latest go; a purged job's all go", () => {
    const { server, live, health } = setup();
    server.jobs.register(job("gc", 1, { MaxParallel: 1 }));
    health(live("gc"), true);
    server.jobs.register(job("gc", 1, { MaxParallel: 1 }, "2"));
    health(byVersion(live("gc"), 1), true);
    const [newest, oldest] = server.deployments.ofJob("gc", false);
    server.collectGarbage(true);
    expect(server.deployments.ofJob("gc", false).map((deployment) => deployment.ID)).toEqual([newest!.ID]);
    expect(() => server.deployments.get(oldest!.ID)).toThrow("not found");
    server.jobs.deregister("gc", true);
    server.collectGarbage(true);
    expect(server.deployments.ofJob("gc", true)).toEqual([]);
  });

  test("a job without an update block (max_parallel 0) has no deployment", () => {
    const { server } = setup();
    server.jobs.register(job("none", 2, { MaxParallel: 0 }));
    expect(server.deployments.latestOfJob("none")).toBeNull();
  });
});
