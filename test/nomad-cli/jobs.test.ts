/**
 * Nomad 0.12's own CLI against a drover agent: the job commands, judged on
 * what they print. One agent for the file; the jobs are shared by the
 * tests, which run in order.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { field, nomad, NOMAD_BINARY, nomadMissing, table } from "../helpers/nomad.ts";

const skip = NOMAD_BINARY === null;
const agent = skip ? null : await testAgent("drover-nomad-jobs-");
if (agent) await agent.start();
const dir = tempDir("drover-nomad-jobs-files-");
const run = (...args: string[]) => nomad(agent!.address, ...args);

/** What makes a job one drover's server refuses, as Nomad's would: a system job runs everywhere it may, so it cannot spread. */
const SYSTEM = `type = "system"\n  spread {\n    attribute = "\${node.datacenter}"\n  }`;

/**
 * A Nomad HCL1 job: `count` raw_exec tasks that print a greeting and wait.
 * Its updates roll as Nomad's default update block says (one at a time),
 * each alloc healthy as soon as it runs.
 */
function jobFile(name: string, options: { count?: number; greeting?: string; system?: boolean } = {}): string {
  const path = join(dir, `${name}-${options.count ?? 1}-${options.greeting ?? "hi"}-${options.system ? "system" : "service"}.nomad`);
  writeFileSync(
    path,
    `job "${name}" {
  datacenters = ["dc1"]
  ${options.system ? SYSTEM : ""}
  group "web" {
    count = ${options.count ?? 1}
    update {
      min_healthy_time = "0s"
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $GREETING; exec sleep 600"]
      }
      env {
        GREETING = "${options.greeting ?? "hi"}"
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

/** Waits until `nomad job status` lists `count` running allocs of the job's latest version. */
async function runningAllocs(job: string, count: number, version: number): Promise<string[][]> {
  return waitFor(`${count} running allocs of ${job} v${version}`, async () => {
    const rows = table((await run("job", "status", job)).stdout, "Allocations").slice(1);
    const running = rows.filter((row) => row[3] === String(version) && row[4] === "run" && row[5] === "running");
    return running.length === count ? running : null;
  });
}

describe.skipIf(skip)(`nomad job commands against drover${skip ? ` (skipped: ${nomadMissing})` : ""}`, () => {
  test("job validate: a good file passes; one drover's server refuses says why", async () => {
    const good = await run("job", "validate", jobFile("web"));
    expect(good.stdout).toContain("Job validation successful");
    expect(good.code).toBe(0);
    const bad = await run("job", "validate", jobFile("web", { system: true }));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Job validation errors");
    expect(bad.stderr).toContain("system jobs may not have a spread block");
    expect(bad.stderr).not.toContain("Driver configuration not validated");
  });

  test("job plan of a new job: every field added, one alloc to create, exit code 1", async () => {
    const plan = await run("job", "plan", jobFile("web"));
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain('+ Job: "web"');
    expect(plan.stdout).toContain('+ Task Group: "web" (1 create)');
    expect(plan.stdout).toContain('+ Task: "server" (forces create)');
    expect(plan.stdout).toContain("All tasks successfully allocated.");
    expect(plan.stdout).toContain("Job Modify Index: 0");
  });

  test("job run -detach registers and prints the evaluation", async () => {
    const res = await run("job", "run", "-detach", jobFile("web"));
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Job registration successful");
    expect(res.stdout).toMatch(/Evaluation ID: [0-9a-f-]{36}/);
    await runningAllocs("web", 1, 0);
  });

  test("job run monitors the evaluation to completion", async () => {
    const res = await run("job", "run", jobFile("other"));
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Allocation "[0-9a-f]{8}" created: node "[0-9a-f]{8}", group "web"/);
    expect(res.stdout).toMatch(/Evaluation "[0-9a-f]{8}" finished with status "complete"/);
  });

  test("job status and -verbose: the job, its summary, evaluations and allocations", async () => {
    const res = await run("job", "status", "web");
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    expect(field(res.stdout, "ID")).toBe("web");
    expect(field(res.stdout, "Type")).toBe("service");
    expect(field(res.stdout, "Status")).toBe("running");
    expect(table(res.stdout, "Summary")[1]).toEqual(["web", "0", "0", "1", "0", "0", "0"]);
    const verbose = await run("job", "status", "-verbose", "web");
    // The registration's evaluation, and (once the alloc is healthy) the deployment watcher's.
    expect(table(verbose.stdout, "Evaluations").slice(1)).toContainEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), "50", "job-register", "complete", "false"]);
    expect(table(verbose.stdout, "Allocations")[1]![0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("job inspect prints the job's JSON", async () => {
    const res = await run("job", "inspect", "web");
    const { Job } = JSON.parse(res.stdout) as { Job: { ID: string; TaskGroups: { Count: number; Tasks: { Env: Record<string, string> }[] }[] } };
    expect(Job.ID).toBe("web");
    expect(Job.TaskGroups[0]!.Tasks[0]!.Env).toEqual({ GREETING: "hi" });
  });

  test("job plan of a change: the diff, what it does to the allocs, the index to check", async () => {
    const jobModifyIndex = (await agent!.get<{ JobModifyIndex: number }>("/v1/job/web")).JobModifyIndex;
    const plan = await run("job", "plan", jobFile("web", { count: 2, greeting: "hello" }));
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain('+/- Job: "web"');
    // With Nomad's default update block (max_parallel 1) the new alloc goes first; the replacement waits for it.
    expect(plan.stdout).toMatch(/\+\/- Task Group: "web" \(1 create, 1 ignore\)/);
    expect(plan.stdout).toMatch(/\+\/- Count: +"1" => "2"/);
    expect(plan.stdout).toMatch(/\+\/- Task: "server" \(forces create\/destroy update\)/);
    expect(plan.stdout).toMatch(/\+\/- Env\[GREETING\]: +"hi" => "hello"/);
    expect(plan.stdout).toContain(`Job Modify Index: ${jobModifyIndex}`);
    expect(plan.stdout).toContain(`nomad job run -check-index ${jobModifyIndex}`);
    // A plan changes nothing.
    expect((await agent!.get<{ Version: number }>("/v1/job/web")).Version).toBe(0);
  });

  test("job run -check-index applies the planned change; job history lists both versions", async () => {
    const jobModifyIndex = (await agent!.get<{ JobModifyIndex: number }>("/v1/job/web")).JobModifyIndex;
    const stale = await run("job", "run", "-detach", "-check-index", "1", jobFile("web", { count: 2, greeting: "hello" }));
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("conflicting job modify index");
    const res = await run("job", "run", "-detach", "-check-index", String(jobModifyIndex), jobFile("web", { count: 2, greeting: "hello" }));
    expect(res.code).toBe(0);
    await runningAllocs("web", 2, 1);
    // Each version's deployment, once every alloc is healthy, marks it stable.
    await waitFor("version 1 stable", async () => (await agent!.get<{ Stable: boolean; Version: number }>("/v1/job/web")).Stable);
    const history = await run("job", "history", "web");
    expect(history.code).toBe(0);
    expect(history.stdout.match(/^Version +=.*$/gm)).toEqual(["Version     = 1", "Version     = 0"]);
    expect(history.stdout.match(/^Stable +=.*$/gm)).toEqual(["Stable      = true", "Stable      = true"]);
    const diffs = await run("job", "history", "-p", "web");
    expect(diffs.stdout).toMatch(/\+\/- Env\[GREETING\]: +"hi" => "hello"/);
  });

  test("job revert puts an older version back as the newest", async () => {
    const res = await run("job", "revert", "web", "0");
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Evaluation "[0-9a-f]{8}" finished with status "complete"/);
    const job = await agent!.get<{ Version: number; TaskGroups: { Count: number; Tasks: { Env: Record<string, string> }[] }[] }>("/v1/job/web");
    expect(job.Version).toBe(2);
    expect(job.TaskGroups[0]!.Count).toBe(1);
    expect(job.TaskGroups[0]!.Tasks[0]!.Env.GREETING).toBe("hi");
    await runningAllocs("web", 1, 2);
    const current = await run("job", "revert", "web", "2");
    expect(current.code).toBe(1);
    expect(current.stderr).toContain("can't revert to current version");
  });

  test("eval status shows an evaluation of the job", async () => {
    const verbose = await run("job", "status", "-verbose", "web");
    const evalId = table(verbose.stdout, "Evaluations")[1]![0]!;
    const res = await run("eval", "status", evalId.slice(0, 8));
    expect(res.code).toBe(0);
    expect(field(res.stdout, "ID")).toBe(evalId.slice(0, 8));
    expect(field(res.stdout, "Job ID")).toBe("web");
    expect(field(res.stdout, "Status")).toBe("complete");
  });

  test("status <prefix> finds a job, an alloc and a node by prefix", async () => {
    expect(field((await run("status", "we")).stdout, "ID")).toBe("web");
    const [allocRow] = await runningAllocs("web", 1, 2);
    const alloc = await run("status", allocRow![0]!.slice(0, 6));
    expect(field(alloc.stdout, "Job ID")).toBe("web");
    const nodeId = (await agent!.get<{ ID: string }[]>("/v1/nodes"))[0]!.ID;
    expect(field((await run("status", nodeId.slice(0, 6))).stdout, "ID")).toBe(nodeId);
    const none = await run("status", "zz-nothing");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('Unable to resolve ID: "zz-nothing"');
  });

  test("job stop stops the allocs; -purge removes the job; system gc collects the stopped one", async () => {
    const stop = await run("job", "stop", "web");
    expect(stop.code).toBe(0);
    expect(stop.stdout).toMatch(/Evaluation "[0-9a-f]{8}" finished with status "complete"/);
    await waitFor("web dead", async () => field((await run("job", "status", "web")).stdout, "Status") === "dead (stopped)");
    const purge = await run("job", "stop", "-purge", "other");
    expect(purge.code).toBe(0);
    const gone = await run("job", "status", "other");
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('No job(s) with prefix or id "other" found');
    await waitFor("web's allocs finished", async () =>
      table((await run("job", "status", "web")).stdout, "Allocations")
        .slice(1)
        .every((row) => row[5] === "complete"),
    );
    const gc = await run("system", "gc");
    expect(gc.code).toBe(0);
    expect((await run("job", "status", "web")).stderr).toContain('No job(s) with prefix or id "web" found');
  });
});
