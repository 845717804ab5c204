/**
 * Deployments through the compiled binary with `health_check = "checks"`:
 * the client judges each alloc by its native service checks. A version
 * whose check fails is never healthy: at healthy_deadline it is unhealthy,
 * its deployment fails and auto_revert puts the stable version back. A
 * version whose check passes is healthy and its deployment succeeds.
 */
import { describe, expect, test } from "bun:test";
import { testAgent } from "../helpers/agent.ts";
import { waitFor } from "../helpers/index.ts";

const agent = await testAgent("drover-e2e-deploy-health-");
await agent.start();

const SECOND_NS = 1e9;

/** A service whose task (this test's own Bun) answers its HTTP check with `status`. */
function job(status: number) {
  const serve = `Bun.serve({ port: Number(process.env.NOMAD_PORT_http), hostname: '127.0.0.1', fetch: () => new Response('', { status: ${status} }) })`;
  return {
    Job: {
      ID: "checked",
      Datacenters: ["dc1"],
      Meta: { status: String(status) },
      TaskGroups: [
        {
          Name: "web",
          Count: 1,
          Networks: [{ DynamicPorts: [{ Label: "http" }] }],
          Services: [{ Name: "checked", PortLabel: "http", Checks: [{ Name: "alive", Type: "http", Path: "/", Interval: SECOND_NS, Timeout: SECOND_NS }] }],
          Update: { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 0, HealthyDeadline: 3 * SECOND_NS, ProgressDeadline: 10 * SECOND_NS, AutoRevert: true },
          Tasks: [{ Name: "server", Driver: "raw_exec", Config: { command: process.execPath, args: ["-e", serve] }, Resources: { CPU: 50, MemoryMB: 64 } }],
        },
      ],
    },
  };
}

interface Deployment {
  ID: string;
  JobVersion: number;
  Status: string;
  StatusDescription: string;
}

async function register(body: unknown): Promise<void> {
  const res = await fetch(`${agent.address}/v1/jobs`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}

const until = (version: number, status: string) =>
  waitFor(`version ${version}'s deployment ${status}`, async () => {
    const deployments = await agent.get<Deployment[]>("/v1/job/checked/deployments");
    return deployments.find((deployment) => deployment.JobVersion === version && deployment.Status === status) ?? null;
  });

describe("health from native service checks", () => {
  test("a passing check makes the alloc healthy; a failing one fails the deployment, which reverts", async () => {
    await register(job(200));
    await until(0, "successful");
    expect((await agent.get<{ Stable: boolean }>("/v1/job/checked")).Stable).toBe(true);

    await register(job(500));
    const failed = await until(1, "failed");
    expect(failed.StatusDescription).toBe("Failed due to unhealthy allocations - rolling back to job version 0");
    const reverted = await agent.get<{ Version: number; Meta: Record<string, string> }>("/v1/job/checked");
    expect(reverted).toMatchObject({ Version: 2, Meta: { status: "200" } });
    await until(2, "successful");
    await fetch(`${agent.address}/v1/job/checked?purge=true`, { method: "DELETE" });
    await agent.executorsGone();
  });
});
