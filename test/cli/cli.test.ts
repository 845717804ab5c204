import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { allocCommand } from "../../src/cli/alloc/index.ts";
import { lastLines } from "../../src/cli/alloc/logs.ts";
import { jobCommand } from "../../src/cli/job/index.ts";
import { nodeCommand } from "../../src/cli/node/index.ts";
import { freePort, tempDir } from "../helpers/index.ts";
import { testJob } from "../server/fixtures.ts";
import { LOGS, captureIo, simulateClient, startTestAgent } from "./harness.ts";

const agent = await startTestAgent();
const dir = tempDir("drover-cli-");

function jobFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const hcl = (id: string, body = "", group = "", count = 1) => `
job "${id}" {
  datacenters = ["dc1"]
  group "web" {
    count = ${count}
    ${group}
    task "srv" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      ${body}
    }
  }
}
`;

async function run(command: typeof jobCommand, argv: string[], env: Record<string, string | undefined> = {}) {
  const io = captureIo(env);
  const code = await command([...argv, "-address", agent.address], io);
  return { code, out: io.out, err: io.err };
}

const firstAlloc = (jobId: string) => agent.server.jobs.allocations(jobId).find((alloc) => alloc.DesiredStatus === "run")!;

describe("drover job", () => {
  test("job run registers the file, shows the placements and waits until they run", async () => {
    const client = simulateClient(agent);
    try {
      const result = await run(jobCommand, ["run", jobFile("web.hcl", hcl("web", "", 'network {\n port "http" {}\n }', 2))]);
      expect(result.err).toBe("");
      expect(result.code).toBe(0);
      expect(result.out).toMatch(/^==> Monitoring evaluation "[0-9a-f]{8}"\n    Evaluation triggered by job "web"\n/);
      expect(result.out).toMatch(/Allocation "[0-9a-f]{8}" created: node "[0-9a-f]{8}", group "web"/);
      expect(result.out).toContain('==> Evaluation "');
      expect(result.out).toMatch(/Allocation "[0-9a-f]{8}" \(web\[0\]\) is running: Tasks are running/);
      expect(result.out).toMatch(/Allocation "[0-9a-f]{8}" \(web\[1\]\) is running/);
    } finally {
      client.abort();
    }
  });

  test("an alloc that fails makes job run exit 1", async () => {
    const client = simulateClient(agent, () => "failed");
    try {
      const result = await run(jobCommand, ["run", jobFile("fails.hcl", hcl("fails"))]);
      expect(result.code).toBe(1);
      expect(result.out).toMatch(/\(web\[0\]\) is failed: Failed tasks/);
    } finally {
      client.abort();
    }
  });

  test("what cannot be placed is shown with its reason and exit code 2", async () => {
    const result = await run(jobCommand, ["run", jobFile("huge.hcl", hcl("huge", "resources {\n memory = 999999\n }"))]);
    expect(result.code).toBe(2);
    expect(result.out).toContain('failed to place all allocations:\n    Task Group "web" (failed to place 1 allocation):\n      * Resources exhausted on 1 nodes\n      * Dimension "memory" exhausted on 1 nodes');
    expect(result.out).toMatch(/Evaluation "[0-9a-f]{8}" waiting for additional capacity to place remainder/);
    const status = await run(jobCommand, ["status", "huge"]);
    expect(status.out).toContain('Placement Failure\nTask Group "web" (failed to place 1 allocation):\n  * Resources exhausted on 1 nodes');
    expect(status.out).toMatch(/Task Group\s+Queued\s+Starting\s+Running\s+Failed\s+Complete\s+Lost\nweb\s+1\s+0\s+0\s+0\s+0\s+0/);
  });

  test("-detach returns once registered; a bad file exits 1 naming it and registers nothing", async () => {
    const detached = await run(jobCommand, ["run", "-detach", jobFile("d.hcl", hcl("detached"))]);
    expect(detached.code).toBe(0);
    expect(detached.out).toMatch(/^Job registration successful\nEvaluation ID: [0-9a-f-]{36}\n$/);

    const path = jobFile("bad.hcl", hcl("bad", 'colour = "red"\n resources {\n memory = "lots"\n }'));
    const bad = await run(jobCommand, ["run", path]);
    expect(bad.code).toBe(1);
    // One line per problem, each `file:line,col: field path: message`.
    expect(bad.err).toStartWith(
      `drover job run: 2 problems:\n  ${path}:13,7: job.group["web"].task["srv"].colour: unknown attribute\n` +
        `  ${path}:15,2: job.group["web"].task["srv"].resources.memory: expected number, got "lots"\n`,
    );
    const syntax = await run(jobCommand, ["run", jobFile("syntax.hcl", 'job "x" {\n  count = \n}\n')]);
    expect(syntax.code).toBe(1);
    expect(syntax.err).toMatch(/syntax\.hcl:2,\d+/);
    expect(() => agent.server.jobs.get("bad")).toThrow();
    expect((await run(jobCommand, ["run", join(dir, "missing.hcl")])).err).toContain("cannot read job file");
  });

  test("job run takes HCL2 variables from -var, -var-file and NOMAD_VAR_", async () => {
    const text = `
variable "id" {}
variable "memory" {
  type = number
}
variable "sleep" {
  default = "600"
}
job "\${var.id}" {
  datacenters = ["dc1"]
  group "web" {
    task "srv" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = [var.sleep]
      }
      resources {
        memory = var.memory
      }
    }
  }
}`;
    const path = jobFile("vars.hcl", text.replace('job "${var.id}"', 'job "vars"'));
    const varFile = jobFile("vars.json", '{"memory": 64}');
    const ok = await run(jobCommand, ["run", "-detach", "-var", "id=x", "-var-file", varFile, path], { NOMAD_VAR_sleep: "5" });
    expect(ok.err).toBe("");
    const task = agent.server.jobs.get("vars").TaskGroups[0]!.Tasks[0]!;
    expect([task.Config.args, task.Resources.MemoryMB]).toEqual([["5"], 64]);
    const unset = await run(jobCommand, ["run", "-detach", "-var", "id=x", path]);
    expect(unset.code).toBe(1);
    expect(unset.err).toContain(`${path}:3,1: variable["memory"]: unset variable "memory"`);
    const missing = await run(jobCommand, ["run", "-detach", "-var-file", join(dir, "none.hcl"), path]);
    expect([missing.code, missing.err]).toEqual([1, expect.stringContaining(`${join(dir, "none.hcl")}: cannot read the var file: ENOENT`)]);
  });

  test("job status lists jobs and shows one job in Nomad's layout; -json for scripts", async () => {
    const list = await run(jobCommand, ["status"]);
    expect(list.out).toMatch(/^ID\s+Type\s+Priority\s+Status\s+Submit Date\n/);
    expect(list.out).toMatch(/\nweb\s+service\s+50\s+running\s+\d{4}-\d\d-\d\dT/);

    const detail = await run(jobCommand, ["status", "we"]);
    expect(detail.code).toBe(0);
    expect(detail.out).toMatch(/^ID\s+= web\nName\s+= web\nSubmit Date\s+= .+\nType\s+= service\nPriority\s+= 50\nDatacenters\s+= dc1\n/);
    expect(detail.out).toMatch(/\nAllocations\nID\s+Node ID\s+Task Group\s+Version\s+Desired\s+Status\s+Created\s+Modified\n[0-9a-f]{8}\s+[0-9a-f]{8}\s+web\s+0\s+run\s+running\s+\d+s ago/);

    const json = JSON.parse((await run(jobCommand, ["status", "-json", "web"])).out) as { Job: { ID: string }; Allocations: unknown[] };
    expect(json.Job.ID).toBe("web");
    expect(json.Allocations).toHaveLength(2);
    expect((await run(jobCommand, ["status", "zzz"])).err).toBe('drover job status: no job with prefix or ID "zzz" found\n');
  });

  test("job inspect prints {\"Job\": ...} that job run takes back unchanged", async () => {
    const inspect = await run(jobCommand, ["inspect", "web"]);
    const doc = JSON.parse(inspect.out) as { Job: { ID: string; Version: number } };
    expect(doc.Job).toMatchObject({ ID: "web", Version: 0 });
    const again = await run(jobCommand, ["run", "-detach", jobFile("web.json", inspect.out)]);
    expect(again.code).toBe(0);
    expect(agent.server.jobs.get("web").Version).toBe(0);
  });

  test("job stop stops the allocations; -purge removes the job; a bare prefix needs -yes", async () => {
    agent.server.jobs.register(testJob("stopme", { count: 2 }));
    const prefix = await run(jobCommand, ["stop", "stopm"]);
    expect(prefix.code).toBe(1);
    expect(prefix.err).toContain('"stopm" is a prefix of job "stopme"');
    const stop = await run(jobCommand, ["stop", "stopme"]);
    expect(stop.code).toBe(0);
    expect(stop.out).toMatch(/==> Evaluation "[0-9a-f]{8}" finished with status "complete"/);
    expect(agent.server.jobs.allocations("stopme").every((alloc) => alloc.DesiredStatus === "stop")).toBe(true);
    expect((await run(jobCommand, ["status", "stopme"])).out).toMatch(/Status\s+= dead \(stopped\)/);
    expect((await run(jobCommand, ["stop", "-purge", "-detach", "stopme"])).out).toMatch(/^Evaluation ID: /);
    expect(() => agent.server.jobs.get("stopme")).toThrow();
  });
});

describe("drover alloc", () => {
  test("alloc status shows the allocation, its addresses and its task's events", async () => {
    const alloc = firstAlloc("web");
    const result = await run(allocCommand, ["status", alloc.ID.slice(0, 6)]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(new RegExp(`^ID\\s+= ${alloc.ID.slice(0, 8)}\\n`));
    expect(result.out).toMatch(/Client Status\s+= running\nClient Description\s+= Tasks are running\nDesired Status\s+= run\n/);
    expect(result.out).toMatch(/Allocation Addresses:\nLabel\s+Dynamic\s+Address\nhttp\s+yes\s+127\.0\.0\.1:\d+/);
    expect(result.out).toMatch(/Task "srv" is "running"\nTask Resources:\nCPU\s+Memory\s+Disk\n100 MHz\s+300 MiB\s+300 MiB/);
    expect(result.out).toMatch(/Recent Events:\nTime\s+Type\s+Description\n.+Started\s+Task started by client\n.+Received\s+Task received by client/);
    const json = JSON.parse((await run(allocCommand, ["status", "-json", alloc.ID])).out) as { Job: { ID: string } };
    expect(json.Job.ID).toBe("web");
    expect((await run(allocCommand, ["status", "x"])).err).toContain("needs at least 2 characters");
  });

  test("alloc logs prints the task's log, its tail, stderr, and follows", async () => {
    const alloc = firstAlloc("web");
    LOGS.set(`${alloc.ID}/srv/stdout`, { text: "one\ntwo\nthree\n", later: "four\n" });
    LOGS.set(`${alloc.ID}/srv/stderr`, { text: "oops\n" });
    expect((await run(allocCommand, ["logs", alloc.ID])).out).toBe("one\ntwo\nthree\n");
    expect((await run(allocCommand, ["logs", "-n", "2", alloc.ID, "srv"])).out).toBe("two\nthree\n");
    expect((await run(allocCommand, ["logs", "-stderr", alloc.ID])).out).toBe("oops\n");
    expect((await run(allocCommand, ["logs", "-f", "-n", "1", alloc.ID])).out).toBe("three\nfour\n");
    const query = agent.calls.filter((call) => call.path.startsWith("/v1/client/fs/logs/")).at(-1)!.query;
    expect(query).toEqual({ task: "srv", type: "stdout", origin: "end", offset: "120", follow: "true", plain: "true" });
    expect((await run(allocCommand, ["logs", alloc.ID, "nope"])).err).toContain('has no task "nope" (tasks: srv)');
  });

  test("restart and signal reach the client's endpoints with Nomad's bodies", async () => {
    const alloc = firstAlloc("web");
    expect((await run(allocCommand, ["restart", alloc.ID.slice(0, 8), "srv"])).code).toBe(0);
    expect(agent.calls.at(-1)).toMatchObject({ path: `/v1/client/allocation/${alloc.ID}/restart`, body: { TaskName: "srv", AllTasks: false } });
    expect((await run(allocCommand, ["signal", "-s", "hup", alloc.ID])).code).toBe(0);
    expect(agent.calls.at(-1)).toMatchObject({ path: `/v1/client/allocation/${alloc.ID}/signal`, body: { Signal: "SIGHUP", Task: "" } });
    const bad = await run(allocCommand, ["signal", "-s", "SIGNOPE", alloc.ID]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('unknown signal "SIGNOPE"');
  });

  test("alloc stop shows the evaluation that replaces it", async () => {
    const alloc = firstAlloc("web");
    const result = await run(allocCommand, ["stop", alloc.ID]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Allocation "[0-9a-f]{8}" created: node "[0-9a-f]{8}", group "web"/);
    expect(agent.server.allocs.get(alloc.ID).DesiredStatus).toBe("stop");
  });
});

describe("drover node and the agent address", () => {
  test("node status lists the node and details its resources and allocations", async () => {
    const list = await run(nodeCommand, ["status"]);
    expect(list.out).toMatch(/^ID\s+DC\s+Name\s+Class\s+Drain\s+Eligibility\s+Status\n[0-9a-f]{8}\s+dc1\s+test-node\s+<none>\s+false\s+eligible\s+ready\n$/);
    const detail = await run(nodeCommand, ["status", agent.node.ID.slice(0, 4)]);
    expect(detail.out).toMatch(/Drivers\s+= exec,raw_exec/);
    expect(detail.out).toMatch(/Allocated Resources\nCPU\s+Memory\s+Disk\n\d+\/4000 MHz\s+/);
    expect(detail.out).toContain("\nAllocations\nID");
    expect(detail.out).toMatch(/Host Volumes\s+= certs,shared\n/);
    expect(detail.out).not.toContain("/srv/shared");
    const verbose = await run(nodeCommand, ["status", "-verbose", agent.node.ID]);
    expect(verbose.out).toMatch(/\nHost Volumes\nName\s+ReadOnly\s+Source\ncerts\s+true\s+\/etc\/ssl\/certs\nshared\s+false\s+\/srv\/shared\n/);
  });

  test("an agent that is not running is named, exit 1; DROVER_ADDR picks the agent", async () => {
    const port = await freePort();
    const io = captureIo({ DROVER_ADDR: `127.0.0.1:${port}` });
    expect(await jobCommand(["status"], io)).toBe(1);
    expect(io.err).toBe(`drover job status: cannot reach the drover agent at http://127.0.0.1:${port}: is it running?\n`);
    const viaEnv = captureIo({ DROVER_ADDR: agent.address });
    expect(await nodeCommand(["status"], viaEnv)).toBe(0);
    expect(viaEnv.out).toContain("test-node");
  });

  test("usage errors print the subcommand's usage", async () => {
    const io = captureIo();
    expect(await jobCommand(["stop"], io)).toBe(1);
    expect(io.err).toContain("drover job stop: expected one job ID, got 0 argument(s)");
    expect(io.err).toContain("Usage: drover job stop [options] <job>");
    const unknown = captureIo();
    expect(await allocCommand(["explode"], unknown)).toBe(1);
    expect(unknown.err).toContain('unknown subcommand "explode"');
  });

  test("lastLines keeps the last n lines", () => {
    expect(lastLines("a\nb\nc\n", 2)).toBe("b\nc\n");
    expect(lastLines("a\nb\nc", 2)).toBe("b\nc");
    expect(lastLines("", 3)).toBe("");
    expect(lastLines("a\nb\n", 0)).toBe("");
  });
});
