/**
 * Allocations as a Nomad 0.12 server sends them, read into drover's shape:
 * a real alloc (shared/nomad-0.12-responses) converts and validates, keeping
 * every field of Nomad's job and dropping what only Go's structs carry, and
 * a malformed one is refused naming the field.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { healthParams } from "../../src/client/allocrunner/hooks/health.ts";
import { allocFromGo } from "../../src/nomad-servers/go-allocs.ts";
import { REPO } from "../helpers/binary.ts";

const fixture = [join(REPO, "../shared"), join(REPO, "../../shared")].map((dir) => join(dir, "nomad-0.12-responses/allocation.json")).find(existsSync);
if (!fixture) console.warn("skipping the real-alloc test: no shared/nomad-0.12-responses beside the checkout");

function realAlloc(): Record<string, unknown> {
  return JSON.parse(readFileSync(fixture!, "utf8")) as Record<string, unknown>;
}

describe.skipIf(!fixture)("allocFromGo", () => {
  test("a Nomad 0.12 alloc reads as drover's: the job whole, Go-only fields dropped, nil as Go's zero value", () => {
    const raw = realAlloc();
    raw.GoOnlyField = { X: 1 };
    (raw.Job as Record<string, unknown>).Meta = null;
    const alloc = allocFromGo(raw);
    expect(alloc.Job.TaskGroups[0]!.Tasks[0]!.Driver).toBe("raw_exec");
    expect(alloc.Job.TaskGroups[0]!.Tasks[0]!.Resources.MemoryMaxMB).toBe(0);
    expect(alloc.AllocatedResources.Shared.Ports[0]!.Label).toBe("http");
    expect(Array.isArray(alloc.Job.Constraints)).toBe(true);
    expect(alloc.Job.Meta).toEqual({});
    expect("GoOnlyField" in alloc).toBe(false);
  });

  test("a malformed alloc is refused naming the field", () => {
    const raw = realAlloc();
    (raw.Job as Record<string, unknown>).Priority = "high";
    expect(() => allocFromGo(raw)).toThrow(/Job\.Priority/);
  });

  test("an alloc of a deployment keeps its deployment and canary flag; the client's health watcher times it by the update block", () => {
    const raw = realAlloc();
    raw.DeploymentID = "d1";
    raw.DeploymentStatus = { Healthy: null, Canary: true, ModifyIndex: 7 };
    const group = (raw.Job as { TaskGroups: Record<string, unknown>[] }).TaskGroups[0]!;
    group.Update = { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 2e9, HealthyDeadline: 3e11 };
    const alloc = allocFromGo(raw);
    expect(alloc).toMatchObject({ DeploymentID: "d1", DeploymentStatus: { Healthy: null, Canary: true } });
    expect(healthParams(alloc)).toEqual({ useChecks: false, minHealthyMs: 2000, deadlineMs: 300_000 });
  });

  test("a service alloc outside a deployment is timed by the migrate block, Nomad's default without one", () => {
    const raw = realAlloc();
    raw.DeploymentID = "";
    raw.DeploymentStatus = null;
    const group = (raw.Job as { TaskGroups: Record<string, unknown>[] }).TaskGroups[0]!;
    group.Migrate = null;
    expect(healthParams(allocFromGo(raw))).toMatchObject({ minHealthyMs: 10_000, deadlineMs: 300_000 });
    group.Migrate = { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 1e9, HealthyDeadline: 6e10 };
    expect(healthParams(allocFromGo(raw))).toMatchObject({ minHealthyMs: 1000, deadlineMs: 60_000 });
    (raw.Job as { Type: string }).Type = "batch";
    expect(healthParams(allocFromGo(raw))).toBeUndefined();
  });
});
