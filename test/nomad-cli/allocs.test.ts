/**
 * Nomad 0.12's own CLI against a drover agent: the alloc commands (status,
 * stats, logs, fs, signal, restart, stop), judged on what they print. One
 * agent and one job for the file; the tests run in order.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { field, nomad, NOMAD_BINARY, nomadMissing, nomadUntil, table } from "../helpers/nomad.ts";

const skip = NOMAD_BINARY === null;
const agent = skip ? null : await testAgent("drover-nomad-allocs-");
if (agent) await agent.start();
const dir = tempDir("drover-nomad-allocs-files-");
const run = (...args: string[]) => nomad(agent!.address, ...args);

/**
 * The task: says hello on stdout and stderr, leaves a file in local/, a
 * secret, and a symlink out of the alloc dir; answers SIGHUP on stdout
 * (waiting on a background sleep, so the trap runs at once).
 */
const SCRIPT = [
  "echo started",
  "echo to-stderr >&2",
  'printf "line1\\nline2\\nline3\\n" > "$NOMAD_TASK_DIR/out.txt"',
  'echo s3cret > "$NOMAD_SECRETS_DIR/token"',
  'ln -sf /etc/hostname "$NOMAD_ALLOC_DIR/data/escape"',
  "trap 'echo got-hup' HUP",
  "while true; do sleep 1 & wait $!; done",
].join("; ");

const jobPath = join(dir, "echo.nomad");
writeFileSync(
  jobPath,
  `job "echo" {
  datacenters = ["dc1"]
  group "g" {
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SCRIPT)}]
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

let allocId = "";

/** The job's running alloc (its full ID), once its task has written its files. */
async function runningAlloc(): Promise<string> {
  return waitFor("a running alloc of echo", async () => {
    const allocs = await agent!.get<{ ID: string; ClientStatus: string; DesiredStatus: string }[]>("/v1/job/echo/allocations");
    const alloc = allocs.find((candidate) => candidate.ClientStatus === "running" && candidate.DesiredStatus === "run");
    if (!alloc) return null;
    const out = await run("alloc", "fs", alloc.ID, "server/local/out.txt");
    return out.stdout.includes("line3") ? alloc.ID : null;
  });
}

const follow = (args: string[], text: string, poke?: () => unknown) => nomadUntil(agent!.address, args, (seen) => seen.includes(text), poke);

afterAll(async () => {
  if (agent) await run("job", "stop", "-purge", "echo");
});

describe.skipIf(skip)(`nomad alloc commands against drover${skip ? ` (skipped: ${nomadMissing})` : ""}`, () => {
  test("alloc status: the alloc, its task, its resources and events", async () => {
    expect((await run("job", "run", "-detach", jobPath)).code).toBe(0);
    allocId = await runningAlloc();
    const res = await run("alloc", "status", allocId.slice(0, 8));
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    expect(field(res.stdout, "ID")).toBe(allocId);
    expect(field(res.stdout, "Job ID")).toBe("echo");
    expect(field(res.stdout, "Client Status")).toBe("running");
    expect(res.stdout).toContain('Task "server" is "running"');
    const resources = table(res.stdout, "Task Resources");
    expect(resources[0]).toEqual(["CPU", "Memory", "Disk", "Addresses"]);
    expect(resources[1]![0]).toMatch(/^\d+\/20 MHz$/);
    expect(resources[1]![1]).toMatch(/\/16 MiB$/);
    const events = table(res.stdout, "Recent Events:").map((row) => row[1]);
    expect(events).toEqual(["Type", "Started", "Task Setup", "Received"]);
  });

  test("alloc status -verbose and -stats: full IDs, placement, memory and CPU figures", async () => {
    const verbose = await run("alloc", "status", "-verbose", allocId);
    expect(field(verbose.stdout, "Eval ID")).toMatch(/^[0-9a-f-]{36}$/);
    expect(verbose.stdout).toContain("Placement Metrics");
    const stats = await waitFor("memory stats", async () => {
      const res = await run("alloc", "status", "-stats", allocId);
      return table(res.stdout, "Memory Stats").length === 2 ? res : null;
    });
    expect(table(stats.stdout, "Memory Stats")[0]).toContain("RSS");
    expect(table(stats.stdout, "CPU Stats")[0]).toContain("Percent");
  });

  test("alloc logs: stdout, -stderr, -tail -n", async () => {
    expect((await run("alloc", "logs", allocId)).stdout).toBe("started\n");
    expect((await run("alloc", "logs", "-stderr", allocId)).stdout).toBe("to-stderr\n");
    expect((await run("alloc", "logs", "-tail", "-n", "1", allocId, "server")).stdout).toBe("started\n");
  });

  test("alloc signal: the task gets the signal; alloc logs -f sees what it prints", async () => {
    // The follower reads from the start, so the line is seen whether the signal lands before or after it attaches.
    const signal = run("alloc", "signal", "-s", "SIGHUP", allocId);
    const seen = await follow(["alloc", "logs", "-f", allocId], "got-hup");
    expect((await signal).code).toBe(0);
    expect(seen).toStartWith("started\n");
  });

  test("alloc fs: ls, stat, cat, -tail -c, -f", async () => {
    const root = await run("alloc", "fs", allocId);
    const names = root.stdout.split("\n").slice(1).map((line) => line.trim().split(/\s+/).at(-1));
    expect(names).toContain("alloc/");
    expect(names).toContain("server/");
    const local = await run("alloc", "fs", allocId, "server/local");
    expect(local.stdout).toMatch(/-rw-r--r-- +18 B +\S+ +out\.txt/);
    const stat = await run("alloc", "fs", "-stat", allocId, "server/local/out.txt");
    expect(stat.stdout).toContain("text/plain; charset=utf-8");
    expect((await run("alloc", "fs", allocId, "server/local/out.txt")).stdout).toBe("line1\nline2\nline3\n");
    expect((await run("alloc", "fs", "-tail", "-c", "6", allocId, "server/local/out.txt")).stdout).toBe("line3\n");
    const followed = await follow(["alloc", "fs", "-f", allocId, "server/local/out.txt"], "line3\n");
    expect(followed).toStartWith("line1\n");
  });

  test("alloc fs stays in the alloc dir: no .., no symlink out, no secrets", async () => {
    const up = await run("alloc", "fs", allocId, "../..");
    expect(up.code).toBe(1);
    expect(up.stderr).toContain("Path escapes the alloc directory");
    const link = await run("alloc", "fs", allocId, "alloc/data/escape");
    expect(link.code).toBe(1);
    expect(link.stderr).toContain("Path escapes the alloc directory");
    const secret = await run("alloc", "fs", allocId, "server/secrets/token");
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain("Reading secret file prohibited");
    expect(secret.stdout).not.toContain("s3cret");
  });

  test("alloc restart restarts the task in place", async () => {
    const res = await run("alloc", "restart", allocId);
    expect(res.code).toBe(0);
    await waitFor("the restart in the task's events", async () => {
      const status = await run("alloc", "status", allocId);
      return field(status.stdout, "Total Restarts") === "1" && status.stdout.includes('Task "server" is "running"') ? status : null;
    });
    const events = table((await run("alloc", "status", allocId)).stdout, "Recent Events:").map((row) => row[1]);
    expect(events).toContain("Restart Signaled");
  });

  test("alloc stop stops it and a replacement takes its place", async () => {
    const res = await run("alloc", "stop", allocId);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Evaluation "[0-9a-f]{8}" finished with status "complete"/);
    const stopped = await waitFor("the alloc stopped", async () => {
      const status = await run("alloc", "status", allocId);
      return field(status.stdout, "Client Status") === "complete" ? status : null;
    });
    expect(field(stopped.stdout, "Desired Status")).toBe("stop");
    expect(field(stopped.stdout, "Replacement Alloc ID")).toMatch(/^[0-9a-f]{8}$/);
    expect(await runningAlloc()).not.toBe(allocId);
  });

  test("client GC of a finished alloc removes its dir; a running one is refused", async () => {
    const running = await runningAlloc();
    const refused = await fetch(`${agent!.address}/v1/client/allocation/${running}/gc`, { method: "PUT" });
    expect([refused.status, await refused.text()]).toEqual([400, `allocation ${running} is still running; stop it before collecting it`]);
    expect((await fetch(`${agent!.address}/v1/client/allocation/${allocId}/gc`)).status).toBe(200);
    const gone = await run("alloc", "fs", allocId);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("404");
  });
});
