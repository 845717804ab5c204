/**
 * Nomad 0.12's own CLI against a drover agent: deployments (canaries, auto
 * and manual promotion), periodic and parameterized jobs. One agent for the
 * file; the tests run in order.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { field, nomad, NOMAD_BINARY, nomadMissing, table } from "../helpers/nomad.ts";

const skip = NOMAD_BINARY === null;
const agent = skip ? null : await testAgent("drover-nomad-deploy-");
if (agent) await agent.start();
const dir = tempDir("drover-nomad-deploy-files-");
const run = (...args: string[]) => nomad(agent!.address, ...args);

/** A service of `count` raw_exec tasks printing `greeting`, with one canary; healthy once running for a second. */
function serviceFile(name: string, greeting: string, autoPromote: boolean): string {
  const path = join(dir, `${name}-${greeting}.nomad`);
  writeFileSync(
    path,
    `job "${name}" {
  datacenters = ["dc1"]
  group "web" {
    count = 2
    update {
      max_parallel     = 1
      canary           = 1
      auto_promote     = ${autoPromote}
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $GREETING; exec sleep 600"]
      }
      env {
        GREETING = "${greeting}"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`,
  );
  return path;
}

interface ApiDeployment {
  ID: string;
  Status: string;
  JobVersion: number;
  TaskGroups: Record<string, { Promoted: boolean; DesiredCanaries: number; PlacedCanaries: string[]; HealthyAllocs: number }>;
}

const latest = (job: string) => agent!.get<ApiDeployment | null>(`/v1/job/${job}/deployment`);

async function deploymentOf(job: string, version: number, status: string): Promise<ApiDeployment> {
  return waitFor(`${job} v${version}'s deployment ${status}`, async () => {
    const deployment = await latest(job);
    return deployment?.JobVersion === version && deployment.Status === status ? deployment : null;
    // A deployment waits for allocs to start and stay healthy for min_healthy_time: slow on a loaded machine.
  }, { timeoutMs: 30_000 });
}

describe.skipIf(skip)(`nomad deployments, periodic and dispatch against drover${skip ? ` (skipped: ${nomadMissing})` : ""}`, () => {
  test("job run of a new version: a canary, promoted automatically once healthy, then the rest; job status shows the deployment", async () => {
    const first = await run("job", "run", serviceFile("web", "hi", true));
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Evaluation within deployment: "[0-9a-f]{8}"/);
    await deploymentOf("web", 0, "successful");

    const second = await run("job", "run", serviceFile("web", "hello", true));
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/Evaluation within deployment: "[0-9a-f]{8}"/);
    const deployment = await deploymentOf("web", 1, "successful");
    expect(deployment.TaskGroups.web).toMatchObject({ Promoted: true, DesiredCanaries: 1, HealthyAllocs: 2 });
    expect(deployment.TaskGroups.web!.PlacedCanaries).toHaveLength(1);

    const status = await run("job", "status", "web");
    expect(status.code).toBe(0);
    expect(field(status.stdout, "ID")).toBe("web");
    const latestSection = status.stdout.slice(status.stdout.indexOf("Latest Deployment"));
    expect(field(latestSection, "ID")).toBe(deployment.ID.slice(0, 8));
    expect(field(latestSection, "Status")).toBe("successful");
    expect(field(latestSection, "Description")).toBe("Deployment completed successfully");
    expect(table(status.stdout, "Deployed")).toEqual([
      ["Task Group", "Promoted", "Desired", "Canaries", "Placed", "Healthy", "Unhealthy", "Progress Deadline"],
      ["web", "true", "2", "1", "2", "2", "0", expect.stringMatching(/^\d{4}-\d\d-\d\dT/)],
    ]);
    const running = table(status.stdout, "Allocations")
      .slice(1)
      .filter((row) => row[4] === "run");
    expect(running.map((row) => row[3])).toEqual(["1", "1"]);

    const history = await run("job", "history", "web");
    expect(history.stdout.match(/^Stable +=.*$/gm)).toEqual(["Stable      = true", "Stable      = true"]);
  });

  test("deployment status and list; without auto_promote the canary waits for deployment promote", async () => {
    expect((await run("job", "run", serviceFile("manual", "hi", false))).code).toBe(0);
    await deploymentOf("manual", 0, "successful");
    expect((await run("job", "run", serviceFile("manual", "hello", false))).code).toBe(0);
    const waiting = await waitFor("the canary healthy", async () => {
      const deployment = await latest("manual");
      return deployment?.JobVersion === 1 && deployment.TaskGroups.web!.HealthyAllocs === 1 ? deployment : null;
    }, { timeoutMs: 30_000 });
    const status = await run("deployment", "status", waiting.ID.slice(0, 8));
    expect(status.code).toBe(0);
    expect(field(status.stdout, "Job ID")).toBe("manual");
    expect(field(status.stdout, "Status")).toBe("running");
    expect(field(status.stdout, "Description")).toBe("Deployment is running but requires manual promotion");
    expect(table(status.stdout, "Deployed")[1]!.slice(0, 6)).toEqual(["web", "false", "2", "1", "1", "1"]);
    const list = await run("deployment", "list");
    expect(list.stdout).toMatch(new RegExp(`${waiting.ID.slice(0, 8)} +manual +1 +running`));

    // nomad job promote finds the job's latest deployment and promotes it.
    const promote = await run("job", "promote", "manual");
    expect(promote.code).toBe(0);
    expect(promote.stdout).toMatch(/Evaluation "[0-9a-f]{8}" finished with status "complete"/);
    await deploymentOf("manual", 1, "successful");
  });

  test("deployment pause and resume; deployment fail marks a running deployment failed", async () => {
    expect((await run("job", "run", serviceFile("manual", "again", false))).code).toBe(0);
    const deployment = await deploymentOf("manual", 2, "running");
    const pause = await run("deployment", "pause", deployment.ID.slice(0, 8));
    expect(pause.code).toBe(0);
    expect(field((await run("deployment", "status", deployment.ID.slice(0, 8))).stdout, "Description")).toBe("Deployment is paused");
    const resume = await run("deployment", "resume", deployment.ID.slice(0, 8));
    expect(resume.code).toBe(0);
    expect(field((await run("deployment", "status", deployment.ID.slice(0, 8))).stdout, "Status")).toBe("running");
    const fail = await run("deployment", "fail", deployment.ID.slice(0, 8));
    expect(fail.code).toBe(0);
    const status = await run("deployment", "status", deployment.ID.slice(0, 8));
    expect(field(status.stdout, "Status")).toBe("failed");
    expect(field(status.stdout, "Description")).toBe("Deployment marked as failed");
  });

  test("job periodic force launches a periodic job's child; job status lists it", async () => {
    const path = join(dir, "cron.nomad");
    writeFileSync(
      path,
      `job "cron" {
  datacenters = ["dc1"]
  type = "batch"
  periodic {
    cron             = "0 0 1 1 *"
    time_zone        = "America/New_York"
    prohibit_overlap = true
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/echo"
        args    = ["tick"]
      }
    }
  }
}
`,
    );
    const register = await run("job", "run", path);
    expect(register.code).toBe(0);
    expect(register.stdout).toContain("Approximate next launch time:");
    const force = await run("job", "periodic", "force", "cron");
    expect(force.code).toBe(0);
    expect(force.stdout).toMatch(/Evaluation triggered by job "cron\/periodic-\d+"/);
    // The CLI reads the summary before the children's list, so one output can show the child
    // dead in the list and still running in the summary: wait for both.
    const status = await waitFor("the child dead", async () => {
      const out = (await run("job", "status", "cron")).stdout;
      const dead = table(out, "Previously Launched Jobs")[1]?.[1] === "dead" && table(out, "Children Job Summary")[1]?.[2] === "1";
      return dead ? out : null;
    });
    expect(field(status, "Periodic")).toBe("true");
    expect(table(status, "Previously Launched Jobs")[1]![0]).toMatch(/^cron\/periodic-\d+$/);
    expect(table(status, "Children Job Summary")[1]).toEqual(["0", "0", "1"]);
  });

  test("job dispatch runs a parameterized job's child with its payload and meta", async () => {
    const path = join(dir, "par.nomad");
    writeFileSync(
      path,
      `job "par" {
  datacenters = ["dc1"]
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["who"]
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      dispatch_payload {
        file = "in.txt"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/in.txt; echo $NOMAD_META_who"]
      }
    }
  }
}
`,
    );
    expect((await run("job", "run", path)).code).toBe(0);
    const payload = join(dir, "payload.txt");
    writeFileSync(payload, "the payload\n");
    const missing = await run("job", "dispatch", "par", payload);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Dispatch did not provide required meta keys: [who]");
    const dispatched = await run("job", "dispatch", "-meta", "who=me", "par", payload);
    expect(dispatched.code).toBe(0);
    const childId = field(dispatched.stdout, "Dispatched Job ID")!;
    expect(childId).toMatch(/^par\/dispatch-\d+-[0-9a-f]{8}$/);
    const allocs = await waitFor("the child's alloc complete", async () => {
      const rows = table((await run("job", "status", childId)).stdout, "Allocations").slice(1);
      return rows[0]?.[5] === "complete" ? rows : null;
    });
    const logs = await run("alloc", "logs", allocs[0]![0]!);
    expect(logs.stdout).toBe("the payload\nme\n");
    const parent = await run("job", "status", "par");
    expect(table(parent.stdout, "Dispatched Jobs")[1]).toEqual([childId, "dead"]);
  });
});
