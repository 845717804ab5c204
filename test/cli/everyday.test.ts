/**
 * Nomad's everyday commands, run as drover's CLI against a real agent
 * (`drover agent -dev`, raw_exec tasks) with nothing but NOMAD_ADDR set:
 * one test per command asserting what its user sees, in the order a user
 * would run them, then the whole everyday list in one go.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AllocListStub } from "../../src/structs/alloc.ts";
import { testCgroupParent } from "../helpers/cgroups.ts";
import { executorsUnder, freePort, isRunning, killPids, pidsWithCmdline, tempDir, waitFor } from "../helpers/index.ts";
import { nomad, NOMAD_BINARY } from "../helpers/nomad.ts";
import { drover } from "./drover-cli.ts";

const MAIN = join(import.meta.dir, "../../src/main.ts");
// afterAll hooks run in the order registered: the agent and its tasks stop before the temporary folder goes.
afterAll(async () => {
  await run("job", "stop", "-purge", "-detach", "web");
  await waitFor("the tasks to end", () => executorsUnder(join(dir, "data", "run")).length === 0, { timeoutMs: 20_000 }).catch(() => undefined);
  killPids([agentPid].filter(isRunning));
  killPids(pidsWithCmdline(dir));
});
const dir = tempDir("drover-everyday-");
const cgroupParent = testCgroupParent();
let address = "";
let env: Record<string, string> = {};
let agentPid = 0;

const run = (...argv: string[]) => drover(argv, env);
const api = async <T>(path: string): Promise<T> => (await (await fetch(`${address}${path}`)).json()) as T;
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const task = (command: string, args: string[] = []) => `
    task "t" {
      driver = "raw_exec"
      config {
        command = "${command}"
        args    = ${JSON.stringify(args)}
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }`;

// A deployment that stays running (healthy only after 5 minutes), so pause/resume/fail have one to act on.
const webJob = (count: number) =>
  file(
    "web.hcl",
    `job "web" {
  datacenters = ["dc1"]
  update {
    min_healthy_time  = "5m"
    healthy_deadline  = "10m"
    progress_deadline = "15m"
  }
  group "g" {
    count = ${count}
${task("/bin/sleep", ["600"])}
  }
}
`,
  );

beforeAll(async () => {
  const port = await freePort();
  const config = file("agent.hcl", `ports {\n  http = ${port}\n}\nclient {\n  cgroup_parent = "${cgroupParent}"\n}\n`);
  const agent = Bun.spawn([process.execPath, MAIN, "agent", "-dev", "-config", config, "-data-dir", join(dir, "data"), "-log-json"], { stdout: "ignore", stderr: "ignore" });
  agentPid = agent.pid;
  address = `http://127.0.0.1:${port}`;
  env = { NOMAD_ADDR: address };
  await waitFor("the agent's node to be ready", async () => (await run("node", "status")).out.includes("ready"), { timeoutMs: 30_000 });
}, 40_000);

const runningAlloc = async (job: string) => {
  let found: AllocListStub | undefined;
  await waitFor(`a running alloc of ${job}`, async () => {
    found = (await api<AllocListStub[]>(`/v1/job/${job}/allocations`)).find((alloc) => alloc.ClientStatus === "running" && alloc.DesiredStatus === "run");
    return found !== undefined;
  }, { timeoutMs: 20_000 });
  return found!;
};

describe("drover's CLI with only NOMAD_ADDR set", () => {
  test("job init writes a job file that validates", async () => {
    const path = join(dir, "example.nomad");
    const result = await run("job", "init", path);
    expect(result).toEqual({ code: 0, out: `Example job file written to ${path}\n`, err: "" });
    expect(readFileSync(path, "utf8")).toContain('job "example" {');
    const again = await run("job", "init", path);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`Job '${path}' already exists`);
    expect((await run("job", "validate", path)).out).toBe("Job validation successful\n");
  });

  test("job validate names the problem and exits 1", async () => {
    const bad = file("bad.hcl", 'job "bad" {\n  group "g" {\n    count = -1\n' + task("/bin/true") + "\n  }\n}\n");
    const result = await run("job", "validate", bad);
    expect(result.code).toBe(1);
    expect(result.err).toContain('bad.hcl:3,5: job.group["g"].count: expected at least 0, got -1');
  });

  test("job plan of a new job shows it added and exits 1 (allocations would be created)", async () => {
    const result = await run("job", "plan", webJob(1));
    expect(result.code).toBe(1);
    expect(result.out).toStartWith('+ Job: "web"\n+ Task Group: "g" (1 create)\n  + Task: "t" (forces create)\n');
    expect(result.out).toContain("Scheduler dry-run:\n- All tasks successfully allocated.\n");
    expect(result.out).toMatch(/Job Modify Index: 0\nTo submit the job with version verification run:\n\nnomad job run -check-index 0 .*web\.hcl/);
  });

  test("job run, then status <prefix> of the job, its alloc (8 characters) and its node", async () => {
    const result = await run("job", "run", webJob(1));
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Allocation "[0-9a-f]{8}" \(g\[0\]\) is running/);
    const alloc = await runningAlloc("web");
    const job = await run("status", "we");
    expect(job.out).toMatch(/^ID +?= web\n/);
    const byAlloc = await run("status", alloc.ID.slice(0, 8));
    expect(byAlloc.out).toContain(`ID                  = ${alloc.ID.slice(0, 8)}`);
    expect(byAlloc.out).toContain('Task "t" is "running"');
    const byNode = await run("status", alloc.NodeID.slice(0, 8));
    expect(byNode.out).toMatch(/\nStatus +?= ready\n/);
    expect((await run("status")).out).toMatch(/^ID +Type +Priority +Status +Submit Date\nweb +service +50 +running/);
  });

  test("job status -t and -json give scripts the job", async () => {
    expect((await run("job", "status", "-t", "{{.Job.ID}} {{len .Allocations}}", "web")).out).toBe("web 1\n");
    const json = JSON.parse((await run("job", "status", "-json", "web")).out) as { Job: { ID: string } };
    expect(json.Job.ID).toBe("web");
    const both = await run("job", "status", "-json", "-t", "{{.}}", "web");
    expect(both.code).toBe(1);
    expect(both.err).toContain("Both json and template formatting are not allowed");
  });

  test("alloc status, fs, logs and signal take the 8-character ID job status prints", async () => {
    const alloc = await runningAlloc("web");
    const short = alloc.ID.slice(0, 8);
    expect((await run("alloc", "status", short)).out).toContain("Client Status       = running");
    const root = await run("alloc", "fs", short);
    expect(root.out).toMatch(/^Mode +Size +Modified Time +Name\n/);
    expect(root.out).toMatch(/ alloc\/\n/);
    expect(root.out).toMatch(/ t\/\n/);
    expect((await run("alloc", "fs", short, "t")).out).toMatch(/ local\/\n/);
    expect((await run("alloc", "fs", "-stat", short, "t/local")).out).toMatch(/^Mode +Size +Modified Time +Content Type +Name\nd\S+ .* local\/\n$/);
    const secrets = await run("alloc", "fs", short, "t/secrets/nope");
    expect(secrets.code).toBe(1);
    expect((await run("alloc", "logs", short, "t")).code).toBe(0);
    expect(await run("alloc", "signal", "-s", "SIGCONT", short, "t")).toEqual({ code: 0, out: "", err: "" });
  });

  test("job scale changes the count and job history -p shows the change", async () => {
    const result = await run("job", "scale", "web", "g", "2");
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/==> Monitoring evaluation "[0-9a-f]{8}"\n {4}Evaluation triggered by job "web"\n/);
    const history = await run("job", "history", "-p", "web");
    expect(history.out).toMatch(/^Version     = 1\nStable      = false\nSubmit Date = .*\nDiff        = \n\+\/- Job: "web"\n\+\/- Task Group: "g"\n  \+\/- Count: "1" => "2"\n      Task: "t"\n\nVersion     = 0\n/);
    expect((await run("job", "history", "-t", "{{range .}}{{.Version}} {{end}}", "web")).out).toBe("1 0 \n");
    // The count it has already: nothing to evaluate, and nothing wrong.
    const again = await run("job", "scale", "web", "g", "2");
    expect(again).toMatchObject({ code: 0, err: "" });
    expect((await run("job", "history", "-t", "{{range .}}{{.Version}} {{end}}", "web")).out).toBe("1 0 \n");
  });

  test("deployment list, status, pause, resume and fail", async () => {
    const list = await run("deployment", "list");
    expect(list.out).toMatch(/^ID +Job ID +Job Version +Status +Description\n[0-9a-f]{8} +web +1 +running +Deployment is running\n/);
    const id = list.out.split("\n")[1]!.slice(0, 8);
    const status = await run("deployment", "status", id);
    expect(status.out).toMatch(/^ID          = [0-9a-f]{8}\nJob ID      = web\nJob Version = 1\nStatus      = running\n/);
    expect(status.out).toMatch(/\n\nDeployed\nTask Group +Desired +Placed +Healthy +Unhealthy +Progress Deadline\ng +2 +/);
    const full = (await run("deployment", "status", "-t", "{{.ID}}", id)).out.trim();
    expect((await run("deployment", "pause", id)).out).toBe(`Deployment "${full}" paused\n`);
    expect((await run("deployment", "status", id)).out).toContain("Status      = paused");
    expect((await run("deployment", "resume", "-detach", id)).out).toStartWith(`Deployment "${full}" resumed\n`);
    expect((await run("job", "deployments", "web")).out).toMatch(/\n[0-9a-f]{8} +web +1 +running/);
    const failed = await run("deployment", "fail", "-detach", id);
    expect(failed.out).toStartWith(`Deployment "${full}" failed`);
    const promote = await run("deployment", "promote", id);
    expect(promote.code).toBe(1);
    expect(promote.err).toContain("terminal deployment");
  });

  test("job promote without canaries says so; job revert goes back to version 0", async () => {
    const promote = await run("job", "promote", "web");
    expect(promote.code).toBe(1);
    expect(promote.err).toMatch(/^drover job promote: /);
    expect((await run("job", "revert", "-detach", "web", "0")).code).toBe(0);
    expect((await run("job", "history", "-version", "2", "-t", "{{.Version}} {{(index .TaskGroups 0).Count}}", "web")).out).toBe("2 1\n");
  });

  test("job dispatch starts a child of a parameterized job with its meta", async () => {
    const path = file("pb.hcl", `job "pb" {\n  datacenters = ["dc1"]\n  type = "batch"\n  parameterized {\n    payload = "optional"\n    meta_optional = ["foo"]\n  }\n  group "g" {\n${task("/bin/true")}\n  }\n}\n`);
    expect((await run("job", "run", "-detach", path)).out).toStartWith("Job registration successful\n");
    const result = await run("job", "dispatch", "-meta", "foo=bar", "pb");
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^Dispatched Job ID = pb\/dispatch-\d+-[0-9a-f]{8}\nEvaluation ID     = [0-9a-f]{8}\n\n==> Monitoring evaluation/);
    const child = /Dispatched Job ID = (\S+)/.exec(result.out)![1]!;
    expect((await api<{ Meta: Record<string, string> }>(`/v1/job/${encodeURIComponent(child)}`)).Meta).toEqual({ foo: "bar" });
  });

  test("job periodic force launches a periodic job now; job eval schedules a job again", async () => {
    const path = file("per.hcl", `job "per" {\n  datacenters = ["dc1"]\n  type = "batch"\n  periodic {\n    cron = "0 0 1 1 *"\n  }\n  group "g" {\n${task("/bin/true")}\n  }\n}\n`);
    await run("job", "run", "-detach", path);
    const forced = await run("job", "periodic", "force", "-detach", "per");
    expect(forced.out).toMatch(/^Force periodic successful\nEvaluation ID: [0-9a-f-]{36}\n$/);
    const evaluated = await run("job", "eval", "web");
    expect(evaluated.out).toMatch(/^==> Monitoring evaluation "[0-9a-f]{8}"\n {4}Evaluation triggered by job "web"\n/);
  });

  test("eval list and eval status", async () => {
    const list = await run("eval", "list", "-job", "web");
    expect(list.out).toMatch(/^ID +Priority +Triggered By +Job ID +Namespace +Node ID +Status +Placement Failures\n/);
    const registered = list.out.split("\n").find((line) => / job-register /.test(line))!;
    expect(registered).toMatch(/^[0-9a-f]{8} +50 +job-register +web +default +<none> +complete +false$/);
    const status = await run("eval", "status", registered.slice(0, 8));
    expect(status.out).toMatch(/^ID +?= [0-9a-f]{8}\nCreate Time +?= .* ago\n/);
    expect(status.out).toContain("Job ID             = web\n");
    expect(status.out).toContain("Placement Failures = false");
  });

  test("node eligibility, node config -servers, node drain", async () => {
    const node = (await api<{ ID: string }[]>("/v1/nodes"))[0]!.ID;
    expect((await run("node", "eligibility", "-disable", "-self")).out).toBe(`Node "${node}" scheduling eligibility set: ineligible for scheduling\n`);
    expect((await run("node", "status", node.slice(0, 8))).out).toMatch(/\nEligibility +?= ineligible\n/);
    expect((await run("node", "eligibility", "-enable", node.slice(0, 8))).out).toBe(`Node "${node}" scheduling eligibility set: eligible for scheduling\n`);
    expect((await run("node", "config", "-servers")).out).toBe(`${address.replace("http://", "")}\n`);
    const neither = await run("node", "drain", node.slice(0, 8));
    expect(neither.code).toBe(1);
    expect(neither.err).toContain("Either the '-enable' or '-disable' flag must be set");
  });

  test("agent-info, server members, operator raft list-peers, operator metrics, system gc, ui", async () => {
    const info = await run("agent-info");
    expect(info.out).toMatch(/^agent\n {2}revision = /);
    expect(info.out).toMatch(/\nnomad\n {2}bootstrap = true\n/);
    expect((await run("agent-info", "-t", "{{.stats.nomad.server}}")).out).toBe("true\n");
    expect((await run("server", "members")).out).toMatch(/^Name +Address +Port +Status +Leader +Protocol +Build +Datacenter +Region\n\S+ +127\.0\.0\.1 +\d+ +alive +true +/);
    expect((await run("operator", "raft", "list-peers")).out).toMatch(/^Node +ID +Address +State +Voter +RaftProtocol\n.* leader +true +3\n$/);
    expect((await run("operator", "metrics", "-format", "prometheus")).out).toContain("# TYPE ");
    expect(await run("system", "gc")).toEqual({ code: 0, out: "", err: "" });
    expect((await run("ui", "web")).out).toBe(`Web UI: ${address}/ui/jobs/web\n`);
  });

  test("namespace list and status", async () => {
    expect((await run("namespace", "list")).out).toMatch(/^Name +Description\ndefault +Default shared namespace\n/);
    expect((await run("namespace", "status", "def")).out).toMatch(/^Name            = default\nDescription     = Default shared namespace\n/);
  });

  test("monitor streams the agent's log until interrupted", async () => {
    const monitor = Bun.spawn([process.execPath, MAIN, "monitor", "-log-level", "DEBUG"], { env: { PATH: process.env.PATH, NOMAD_ADDR: address }, stdout: "pipe", stderr: "pipe" });
    try {
      const reader = monitor.stdout.getReader();
      let text = "";
      await waitFor("a log line", async () => {
        await run("job", "eval", "-detach", "web");
        const chunk = await reader.read();
        text += new TextDecoder().decode(chunk.value ?? new Uint8Array());
        return /\[(DEBUG|INFO)\]/.test(text);
      });
      expect(text).toMatch(/^\d{4}-\d\d-\d\dT\S+ \[(DEBUG|INFO)\] /m);
    } finally {
      monitor.kill();
      await monitor.exited;
    }
  });
});

/**
 * What a user sees, line by line, with the values that differ between two
 * runs (IDs, counts, sizes with their units, times, ages) replaced: Nomad's
 * layout without its data.
 */
function shape(text: string): string[] {
  return text
    .trimEnd()
    .split("\n")
    .map((line) =>
      line
        .trim()
        .split(/\s{2,}|\s=\s?/)
        .map((cell) => cell.replace(/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}|\b[0-9a-f]{8}\b|\d[\w.:+-]*( ago| [KMGTP]iB| B)?/g, "#"))
        .join(" | "),
    );
}

/** Nomad 0.12.12's own CLI is the reference for the commands it has: drover's prints the same layout against the same agent. */
describe.skipIf(NOMAD_BINARY === null)("the same layout as Nomad 0.12's CLI", () => {
  test("read commands print what nomad prints", async () => {
    const alloc = (await runningAlloc("web")).ID.slice(0, 8);
    const evalId = (await api<{ ID: string; JobID: string }[]>("/v1/evaluations")).find((evaluation) => evaluation.JobID === "web")!.ID.slice(0, 8);
    const deployment = (await api<{ ID: string }[]>("/v1/deployments"))[0]!.ID.slice(0, 8);
    const node = (await api<{ ID: string }[]>("/v1/nodes"))[0]!.ID.slice(0, 8);
    const web = join(dir, "web.hcl");
    // The children dispatched and forced above run /bin/true: the two CLIs read the job list one
    // after the other, so both must find those children already dead.
    await waitFor("the dispatched and periodic children to be dead", async () =>
      (await api<{ ParentID: string; Status: string }[]>("/v1/jobs")).every((job) => job.ParentID === "" || job.Status === "dead"),
    );
    const commands = [
      ["job", "status"],
      ["job", "status", "web"],
      ["job", "status", "-evals", "web"],
      ["job", "status", "-short", "web"],
      ["job", "status", "pb"],
      ["job", "status", "per"],
      ["status", "web"],
      ["status", deployment],
      ["job", "history", "-p", "web"],
      ["job", "deployments", "web"],
      ["job", "plan", web],
      ["job", "validate", web],
      ["job", "eval", "web"],
      ["job", "dispatch", "pb"],
      ["deployment", "list"],
      ["deployment", "status", deployment],
      ["eval", "status", evalId],
      ["alloc", "status", alloc],
      ["alloc", "fs", alloc, "t"],
      ["alloc", "fs", "-stat", alloc, "t/local"],
      ["node", "status"],
      ["node", "status", node],
      ["node", "config", "-servers"],
      ["server", "members"],
      ["operator", "raft", "list-peers"],
      ["agent-info"],
    ];
    const differing: string[] = [];
    for (const argv of commands) {
      const [ours, theirs] = [await run(...argv), await nomad(address, ...argv)];
      if (ours.code !== theirs.code || JSON.stringify(shape(ours.out)) !== JSON.stringify(shape(theirs.stdout))) {
        differing.push(`${argv.join(" ")}: exit ${ours.code} vs ${theirs.code}\n--- drover\n${ours.out}${ours.err}--- nomad\n${theirs.stdout}${theirs.stderr}`);
      }
    }
    expect(differing).toEqual([]);
  }, 30_000);
});

/**
 * The everyday list: what a Nomad user runs daily. Each must exit 0 with
 * only NOMAD_ADDR set; `var` and `namespace apply/delete` count only where
 * the agent serves their API.
 */
describe("the everyday list", () => {
  test("every everyday command works", async () => {
    const alloc = (await runningAlloc("web")).ID.slice(0, 8);
    const node = (await api<{ ID: string }[]>("/v1/nodes"))[0]!.ID.slice(0, 8);
    const evalId = (await api<{ ID: string }[]>("/v1/evaluations"))[0]!.ID.slice(0, 8);
    const deployment = (await api<{ ID: string }[]>("/v1/deployments"))[0]!.ID.slice(0, 8);
    const web = webJob(2);
    const init = join(dir, "everyday.nomad");
    // An agent without these APIs answers 404 (or 405); one with them answers, or refuses the empty body with a 400.
    const served = async (path: string, method: string) => ![404, 405].includes((await fetch(`${address}${path}`, { method, body: method === "GET" ? undefined : "{}" })).status);
    const varsServed = await served("/v1/vars", "GET");
    const namespacesWritable = await served("/v1/namespace", "PUT");
    const everyday: { argv: string[]; needs?: boolean }[] = [
      { argv: ["job", "init", init] },
      { argv: ["job", "validate", web] },
      { argv: ["job", "plan", web] },
      { argv: ["job", "run", "-detach", web] },
      { argv: ["job", "status"] },
      { argv: ["job", "status", "web"] },
      { argv: ["job", "inspect", "web"] },
      { argv: ["job", "history", "web"] },
      { argv: ["job", "deployments", "web"] },
      { argv: ["job", "scale", "-detach", "web", "2"] },
      { argv: ["job", "revert", "-detach", "web", "0"] },
      { argv: ["job", "eval", "-detach", "web"] },
      { argv: ["job", "dispatch", "-detach", "pb"] },
      { argv: ["job", "periodic", "force", "-detach", "per"] },
      { argv: ["alloc", "status", alloc] },
      { argv: ["alloc", "logs", alloc, "t"] },
      { argv: ["alloc", "fs", alloc, "t"] },
      { argv: ["alloc", "signal", "-s", "SIGCONT", alloc] },
      { argv: ["eval", "status", evalId] },
      { argv: ["eval", "list"] },
      { argv: ["node", "status"] },
      { argv: ["node", "status", node] },
      { argv: ["node", "status", "-self"] },
      { argv: ["node", "eligibility", "-enable", node] },
      { argv: ["node", "config", "-servers"] },
      { argv: ["deployment", "list"] },
      { argv: ["deployment", "status", deployment] },
      { argv: ["status"] },
      { argv: ["status", "web"] },
      { argv: ["status", alloc] },
      { argv: ["status", node] },
      { argv: ["agent-info"] },
      { argv: ["server", "members"] },
      { argv: ["operator", "raft", "list-peers"] },
      { argv: ["operator", "metrics"] },
      { argv: ["system", "gc"] },
      { argv: ["system", "reconcile", "summaries"] },
      { argv: ["namespace", "list"] },
      { argv: ["namespace", "status", "default"] },
      { argv: ["namespace", "apply", "-description", "team a", "team-a"], needs: namespacesWritable },
      { argv: ["namespace", "delete", "team-a"], needs: namespacesWritable },
      { argv: ["var", "put", "-force", "app/config", "k=v"], needs: varsServed },
      { argv: ["var", "get", "app/config"], needs: varsServed },
      { argv: ["var", "list"], needs: varsServed },
      { argv: ["var", "purge", "app/config"], needs: varsServed },
      { argv: ["run", "-detach", web] },
      { argv: ["plan", web] },
      { argv: ["validate", web] },
      { argv: ["inspect", "web"] },
      { argv: ["logs", alloc, "t"] },
      { argv: ["ui"] },
      { argv: ["job", "history", "-p", "web"] },
      { argv: ["alloc", "restart", alloc, "t"] },
      { argv: ["alloc", "stop", "-detach", alloc] },
      { argv: ["node", "drain", "-enable", "-detach", "-yes", node] },
      { argv: ["node", "drain", "-disable", "-yes", node] },
      { argv: ["job", "stop", "-detach", "pb"] },
    ];
    expect(everyday).toHaveLength(57);
    const failures: string[] = [];
    let working = 0;
    for (const { argv, needs = true } of everyday) {
      if (!needs) continue;
      const result = await run(...argv);
      // `job plan` exits 1 when it would place allocations: that is its answer, not a failure.
      const ok = result.code === 0 || (argv.includes("plan") && result.code === 1 && result.err === "");
      if (ok) working++;
      else failures.push(`drover ${argv.join(" ")}: exit ${result.code}: ${result.err.split("\n")[0]}`);
    }
    expect(failures).toEqual([]);
    expect(existsSync(init)).toBe(true);
    // Reported by the branch: how many of the 57 work against this agent.
    console.log(`everyday commands working: ${working} of ${everyday.length}`);
  }, 60_000);
});
