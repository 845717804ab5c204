/**
 * Dispatched jobs that finished, as a user sees them on the compiled agent:
 * their groups leave the server's memory (they live in SQLite), yet `job
 * status` still answers for them and the client keeps their alloc dirs,
 * until `system gc` removes them now, dirs and all.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { waitFor } from "../helpers/index.ts";

const DISPATCHES = 3;

describe("finished dispatched jobs", async () => {
  const agent = await testAgent("drover-finished-");
  await agent.start();

  test("answer in job status and keep their alloc dirs until system gc removes them", async () => {
    const register = await fetch(`${agent.address}/v1/jobs`, {
      method: "POST",
      body: JSON.stringify({
        Job: {
          ID: "work",
          Type: "batch",
          Datacenters: ["dc1"],
          ParameterizedJob: { Payload: "forbidden" },
          TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/true" }, Resources: { CPU: 20, MemoryMB: 16 } }] }],
        },
      }),
    });
    expect(register.status).toBe(200);
    const children: string[] = [];
    for (let n = 0; n < DISPATCHES; n++) {
      const dispatched = await agent.cli("job", "dispatch", "-detach", "work");
      expect(dispatched.code).toBe(0);
      children.push(/Dispatched Job ID\s*=\s*(\S+)/.exec(dispatched.stdout)![1]!);
    }
    const allocs = async () => (await agent.get<{ JobID: string; ClientStatus: string }[]>("/v1/allocations")).filter((alloc) => children.includes(alloc.JobID));
    await waitFor("every dispatched job to complete", async () => (await allocs()).filter((alloc) => alloc.ClientStatus === "complete").length === DISPATCHES);
    for (const child of children) await waitFor(`${child} dead`, async () => (await agent.get<{ Status: string }>(`/v1/job/${encodeURIComponent(child)}`)).Status === "dead");

    const status = await agent.cli("job", "status", children[0]!);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/Status\s*=\s*dead/);
    expect(status.stdout).toContain("complete");
    const allocRoot = join(agent.dataDir, "alloc");
    expect(readdirSync(allocRoot)).toHaveLength(DISPATCHES);

    expect((await agent.cli("system", "gc")).code).toBe(0);
    await waitFor("the collected allocs' dirs to go", () => readdirSync(allocRoot).length === 0);
    expect(await allocs()).toEqual([]);
    const gone = await agent.cli("job", "status", children[0]!);
    expect(gone.code).toBe(1);
  }, 60_000);
});
