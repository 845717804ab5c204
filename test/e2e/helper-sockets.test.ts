/**
 * The agent's own channels: a task tries every executor socket (its own and
 * another task's) and the log pump's, and is turned away: a task running as
 * root (raw_exec as the agent's user) by the check of its credentials and
 * cgroup, a task running as nobody by the directories' modes. The test
 * process itself, on the agent's side, is answered on the same sockets.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { capabilities, tempDir, waitFor } from "../helpers/index.ts";

const skip = !capabilities.root || capabilities.cgroups.mode === "none";
if (skip) console.warn(`skipping the helper sockets test: ${capabilities.root ? "no cgroups (a task cannot be told by its cgroup)" : "not root (tasks cannot run as another user)"}`);

const dir = tempDir("drover-helper-sockets-");
/** Connects to each socket named on the command line (or found in the directories named), sends a version call, prints what came of it. */
const PROBE = `
import { readdirSync } from "node:fs";
import { join } from "node:path";
const targets = [];
for (const arg of process.argv.slice(2)) {
  if (arg.endsWith(".sock")) { targets.push(arg); continue; }
  try {
    for (const name of readdirSync(arg)) if (name.endsWith(".sock")) targets.push(join(arg, name));
  } catch (err) { console.log("list " + arg + ": " + err.code); }
}
function probe(path) {
  return new Promise((resolve) => {
    let got = "";
    const timer = setTimeout(() => resolve(got ? "answered" : "no answer"), 3000);
    const done = (what) => { clearTimeout(timer); resolve(what); };
    Bun.connect({ unix: path, socket: {
      open(socket) { socket.write('{"id":1,"method":"version","params":{}}\\n'); },
      data(socket, chunk) { got += chunk; if (got.includes("\\n")) { done("answered"); socket.end(); } },
      close() { done(got ? "answered" : "closed"); },
      error() { done("error"); },
    } }).catch((err) => done("refused " + err.code));
  });
}
for (const path of targets) console.log(path + ": " + await probe(path));
console.log("probe done");
`;

const agent = skip ? null : await testAgent("drover-helper-sockets-");
const runDir = agent ? join(agent.dataDir, "run") : "";
const logmonDir = agent ? join(agent.dataDir, "logmon") : "";

async function output(allocId: string, task: string): Promise<string> {
  const res = await agent!.fetch(`/v1/client/fs/logs/${allocId}?task=${task}&type=stdout&plain=true`);
  return res.text();
}

let allocs: { ID: string; TaskGroup: string }[] = [];

beforeAll(async () => {
  if (!agent) return;
  // Open the way down to the data dir (which the agent makes 0711) and to the probe, so the run dir's own mode is what stops nobody.
  chmodSync(agent.dir, 0o711);
  chmodSync(dir, 0o755);
  await agent.start();
  const probePath = join(dir, "probe.mjs");
  writeFileSync(probePath, PROBE, { mode: 0o644 });
  // Each task probes only once all three run, so every executor socket the test later lists was there to be tried.
  const go = join(dir, "go");
  const task = (name: string, user: string) => `
    task "${name}" {
      driver = "raw_exec"
      user   = "${user}"
      config {
        command = "/bin/sh"
        args    = ["-c", "until [ -e ${go} ]; do sleep 0.05; done; ${process.execPath} ${probePath} ${runDir} ${logmonDir} ${join(logmonDir, "logmon.sock")}; exec sleep 600"]
      }
      resources {
        cpu    = 20
        memory = 64
      }
    }`;
  const jobPath = join(dir, "probe.nomad");
  writeFileSync(jobPath, `job "probe" {\n  group "a" {${task("root-task", "root")}\n  }\n  group "b" {${task("other-task", "root")}${task("nobody-task", "nobody")}\n  }\n}\n`);
  expect((await agent.cli("job", "run", "-detach", jobPath)).code).toBe(0);
  allocs = await waitFor("the three tasks running", async () => {
    const list = await agent.get<{ ID: string; TaskGroup: string; TaskStates: Record<string, { State: string }> | null }[]>("/v1/job/probe/allocations");
    const running = list.flatMap((alloc) => Object.values(alloc.TaskStates ?? {})).filter((state) => state.State === "running");
    return running.length === 3 ? list : undefined;
  });
  writeFileSync(go, "");
});

describe.skipIf(skip)("the executors' and the log pump's sockets", () => {
  test("are closed to everyone but their owner", () => {
    expect(statSync(runDir).mode & 0o777).toBe(0o700);
    expect(statSync(logmonDir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(runDir).filter((file) => file.endsWith(".sock"))) expect(statSync(join(runDir, name)).mode & 0o077).toBe(0);
  });

  test("a root task is refused on its own executor's socket, another task's and the log pump's", async () => {
    // Executors are shared by tasks (client.tasks_per_executor): these three share one.
    const sockets = readdirSync(runDir).filter((name) => name.endsWith(".sock"));
    expect(sockets.length).toBeGreaterThan(0);
    for (const [group, name] of [["a", "root-task"], ["b", "other-task"]] as const) {
      const alloc = allocs.find((candidate) => candidate.TaskGroup === group)!;
      const seen = await waitFor(`${name}'s probe`, async () => {
        const text = await output(alloc.ID, name);
        return text.includes("probe done") ? text : undefined;
      });
      // Turned away before a byte is read: the connection closes, or is reset as it opens.
      for (const socket of [...sockets.map((name) => join(runDir, name)), join(logmonDir, "logmon.sock")]) {
        expect(seen).toMatch(new RegExp(`${socket.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: (closed|refused ECONNRESET)\n`));
      }
      expect(seen).not.toContain("answered");
    }
  });

  test("a task running as nobody cannot even reach them", async () => {
    const alloc = allocs.find((candidate) => candidate.TaskGroup === "b")!;
    const seen = await waitFor("nobody-task's probe", async () => {
      const text = await output(alloc.ID, "nobody-task");
      return text.includes("probe done") ? text : undefined;
    });
    expect(seen).toContain(`list ${runDir}: EACCES`);
    expect(seen).toContain(`list ${logmonDir}: EACCES`);
    expect(seen).toContain(`${join(logmonDir, "logmon.sock")}: refused EACCES`);
  });

  test("the agent's side is answered on the same sockets", async () => {
    const probePath = join(dir, "probe.mjs");
    const child = Bun.spawn([process.execPath, probePath, runDir, join(logmonDir, "logmon.sock")], { stdout: "pipe" });
    const text = await new Response(child.stdout).text();
    const executors = readdirSync(runDir).filter((name) => name.endsWith(".sock")).length;
    expect(text.match(/: answered/g)?.length).toBe(executors + 1);
  });
});
