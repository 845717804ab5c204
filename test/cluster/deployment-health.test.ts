/**
 * Deployment health as the client reports it: healthy after the main tasks
 * have run for the minimum time, unhealthy on a failure or past the
 * deadline, once, with the alloc's latest report.
 */
import { expect, test } from "bun:test";
import { DeploymentHealth } from "../../src/cluster/deployment-health.ts";
import type { AllocClientUpdate } from "../../src/structs/api.ts";
import { waitFor } from "../helpers/index.ts";

const running = { State: "running" as const, Failed: false, Restarts: 0, LastRestart: null, StartedAt: null, FinishedAt: null, Events: [] };

function tracker() {
  const reports: AllocClientUpdate[] = [];
  const health = new DeploymentHealth((update) => reports.push(update));
  return { health, reports };
}

test("all main tasks running for the minimum time: healthy, with the latest report", async () => {
  const { health, reports } = tracker();
  health.track("a", { minHealthyMs: 20, deadlineMs: 60_000, mainTasks: ["web"], canary: true });
  health.observe({ ID: "a", ClientStatus: "running", TaskStates: { web: running } });
  await waitFor("a verdict", () => reports.length === 1);
  expect(reports[0]).toMatchObject({ ID: "a", ClientStatus: "running", DeploymentStatus: { Healthy: true, Canary: true } });
  health.observe({ ID: "a", ClientStatus: "running", TaskStates: { web: running } });
  expect(reports.length).toBe(1);
});

test("a failed task: unhealthy at once", () => {
  const { health, reports } = tracker();
  health.track("a", { minHealthyMs: 60_000, deadlineMs: 60_000, mainTasks: ["web"], canary: false });
  health.observe({ ID: "a", ClientStatus: "failed", TaskStates: { web: { ...running, State: "dead", Failed: true } } });
  expect(reports.map((r) => r.DeploymentStatus?.Healthy)).toEqual([false]);
  health.stop();
});

test("a task that is not running yet holds the verdict; an alloc that leaves is forgotten", async () => {
  const { health, reports } = tracker();
  const watch = { minHealthyMs: 20, deadlineMs: 60_000, mainTasks: ["web", "db"], canary: false };
  for (const id of ["waiting", "gone", "sentinel"]) health.track(id, watch);
  health.observe({ ID: "waiting", ClientStatus: "running", TaskStates: { web: running, db: { ...running, State: "pending" } } });
  health.observe({ ID: "gone", ClientStatus: "running", TaskStates: { web: running, db: running } });
  health.drop("gone");
  // Started last, the sentinel's timer fires after any the others could have had.
  health.observe({ ID: "sentinel", ClientStatus: "running", TaskStates: { web: running, db: running } });
  await waitFor("the sentinel's verdict", () => reports.length > 0);
  expect(reports.map((r) => r.ID)).toEqual(["sentinel"]);
  health.stop();
});

test("a report seen before the watch (a restored alloc's) counts once the watch starts", async () => {
  const { health, reports } = tracker();
  health.observe({ ID: "restored", ClientStatus: "running", TaskStates: { web: running } });
  health.track("restored", { minHealthyMs: 20, deadlineMs: 60_000, mainTasks: ["web"], canary: false });
  await waitFor("a verdict", () => reports.length === 1);
  expect(reports[0]).toMatchObject({ ID: "restored", DeploymentStatus: { Healthy: true } });
});
