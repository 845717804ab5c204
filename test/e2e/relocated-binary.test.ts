/**
 * The binary stands alone: copied to a directory that did not exist when it
 * was built, run from elsewhere with a HOME and PATH that lead nowhere near
 * the checkout, and (as root) in a mount namespace of its own where the
 * checkout is covered by an empty tmpfs, so no file of the build machine
 * (node_modules above all) can be read. There it runs an agent from an HCL
 * config, serves the web UI (its page and every file the page names, from
 * the executable), runs its mount calls on the mount thread's Worker (its
 * script an entry point of the executable), and `job run` of an HCL job (with a -var), a malformed HCL job and a
 * JSON job.
 * With the HCL parser made to fail at load, every command that reads HCL
 * ends with one line and exit 1 instead of waiting.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import { ensureBinary, REPO } from "../helpers/binary.ts";
import { testCgroupParent } from "../helpers/cgroups.ts";
import { capabilities, freePort, killPids, pidsWithCmdline, tempDir, waitFor } from "../helpers/index.ts";

/** Hiding the checkout needs a mount namespace: root (and util-linux's unshare). */
const canHideCheckout = capabilities.root && Bun.which("unshare") !== null;
if (!canHideCheckout) console.warn("relocated binary: not root, so the checkout stays visible; only its place, cwd, HOME and PATH differ");

const root = tempDir("drover-relocated-");
const binary = join(root, `opt-${process.pid}`, "bin", "drover");
mkdirSync(join(binary, ".."), { recursive: true });
copyFileSync(ensureBinary(), binary);
const home = join(root, "home");
const work = join(root, "work");
mkdirSync(home);
mkdirSync(work);
const port = await freePort();
const address = `http://127.0.0.1:${port}`;
const env = { PATH: "/usr/bin:/bin", HOME: home, DROVER_ADDR: address };

/** argv that runs `args` with the checkout covered by an empty tmpfs, in a mount namespace of its own. */
function hidden(args: string[]): string[] {
  if (!canHideCheckout) return [binary, ...args];
  return ["unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount -t tmpfs -o size=64k drover-hidden "$0" && exec "$@"', REPO, binary, ...args];
}

async function drover(args: string[], extraEnv: Record<string, string> = {}) {
  const child = spawnProcess({ argv: hidden(args), env: { ...env, ...extraEnv }, cwd: work, stdout: "pipe", stderr: "pipe" });
  const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code: status.exitCode, stdout, stderr };
}

const agentConfig = join(work, "agent.hcl");
writeFileSync(
  agentConfig,
  `data_dir = "${join(root, "data")}"
ports {
  http = ${port}
}
client {
  cgroup_parent = "${testCgroupParent()}"
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`,
);

const hclJob = (id: string, extra = "") => `job "${id}" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
${extra}
    }
  }
}
`;
// HCL2 evaluation runs from the executable too: a variable set with -var, a function call.
writeFileSync(join(work, "hello.hcl"), `variable "seconds" {\n  type = number\n}\n${hclJob("hello").replace('["600"]', '[format("%d", var.seconds)]')}`);
writeFileSync(join(work, "broken.hcl"), hclJob("broken", "      resources {\n        memory = \n      }"));
writeFileSync(
  join(work, "hello.json"),
  JSON.stringify({ Job: { ID: "hello-json", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["600"] } }] }] } }),
);

let agent: ChildProcess | undefined;
afterAll(() => {
  agent?.kill("SIGKILL");
  killPids(pidsWithCmdline(root));
});

describe("a relocated binary, away from the checkout", () => {
  test("runs an agent from an HCL config, and HCL, malformed HCL and JSON jobs", async () => {
    agent = spawnProcess({ argv: hidden(["agent", "-config", agentConfig]), env, cwd: work, stderr: "pipe" });
    const log = new Response(agent.stderr).text();
    let exited = false;
    void agent.exited.then(() => (exited = true));
    const healthy = await waitFor("the relocated agent's API", async () => exited ? "exited" : (await fetch(`${address}/v1/agent/health`).catch(() => null))?.ok);
    if (healthy === "exited") throw new Error(`the agent exited: ${await log}`);

    // The web UI comes out of the executable: its page, and each file the page loads.
    const page = await fetch(`${address}/ui/jobs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const files = [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((match) => match[1]!);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) expect({ file, status: (await fetch(`${address}${file}`)).status }).toEqual({ file, status: 200 });

    const hcl = await drover(["job", "run", "-var", "seconds=600", "hello.hcl"]);
    expect(hcl.stderr).toBe("");
    expect(hcl.code).toBe(0);
    expect(hcl.stdout).toMatch(/Allocation "[0-9a-f]{8}" \(g\[0\]\) is running/);

    const broken = await drover(["job", "run", "broken.hcl"]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^drover job run: broken\.hcl:10,\d+: Invalid expression; [^\n]*\n$/);

    const json = await drover(["job", "run", "hello.json"]);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    expect(json.stdout).toContain("is running");

    for (const id of ["hello", "hello-json"]) expect((await drover(["job", "stop", "-purge", id])).code).toBe(0);
    agent.kill("SIGTERM");
    expect(await agent.exited).toEqual({ exitCode: 0, signal: 0 });

    // Mount calls ran on the Worker, its script found inside the executable, not silently on the agent's thread.
    const records = (await log).split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { msg: string; script?: string });
    expect(records.find((record) => record.msg.startsWith("the mount thread failed"))).toBeUndefined();
    expect(records.find((record) => record.msg === "mount calls run on a worker thread")?.script).toBe("/$bunfs/root/src/runtime/mount-worker.js");
  }, 60_000);

  test("with the HCL parser failing to load, job run and agent end with one line and exit 1", async () => {
    const failing = { DROVER_TEST_FAIL_HCL_LOAD: "1" };
    const run = await drover(["job", "run", "hello.hcl"], failing);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^drover job[^\n]*cannot start the HCL parser: [^\n]*\n$/);
    const agentRun = await drover(["agent", "-config", agentConfig], failing);
    expect(agentRun.code).toBe(1);
    expect(agentRun.stderr).toMatch(/^drover agent: cannot start the HCL parser: [^\n]*\n$/);
  }, 60_000);
});
