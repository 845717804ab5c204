/**
 * The escapes issue 21 found, each tried again by an exec task as `nobody`
 * and as `root`, through the compiled agent: the attacker is a command the
 * job runs (here run with `alloc exec`, which enters the task's namespaces,
 * cgroups and syscall filter as the task's own processes have them).
 *
 *   1. the agent's HTTP API over TCP: register a raw_exec job, exec into another task
 *   2. a user namespace and a cgroup mount; a task left at the host's root of some hierarchy
 *   3. a setuid copy of a program left in alloc/data, run by a host user
 *   4. no process limit: a fork bomb
 *   5. /etc/shadow through the bind of /etc
 *   6. host paths in /proc/self/cgroup and /proc/self/fd
 *
 * Needs root, cgroups and python3 (the probes' HTTP and fork calls).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { testAgent } from "../helpers/agent.ts";
import { capabilities, waitFor } from "../helpers/index.ts";

const support = await detectIsolation();
const PYTHON = "/usr/bin/python3";
const skip = !support.available || capabilities.cgroups.mode === "none" || !existsSync(PYTHON);
if (skip) console.log(`skipping the exec escape tests: ${!support.available ? support.reason : existsSync(PYTHON) ? "no cgroups" : "no python3"}`);

/** client.pids_limit of this agent; the root task's job asks for less. */
const CLIENT_PIDS_LIMIT = 100;
const JOB_PIDS_LIMIT = 50;

const JOB = `
job "escapes" {
  type = "service"
  group "nobody" {
    task "probe" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "readlink /proc/self/fd/1 /proc/self/fd/2; exec sleep 600"]
      }
      resources { memory = 64 }
    }
  }
  group "root" {
    task "probe" {
      driver = "exec"
      user   = "root"
      config {
        command    = "/bin/sh"
        args       = ["-c", "readlink /proc/self/fd/1 /proc/self/fd/2; exec sleep 600"]
        pids_limit = ${JOB_PIDS_LIMIT}
      }
      resources { memory = 64 }
    }
  }
  group "victim" {
    task "keeper" {
      driver = "exec"
      user   = "root"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo victim-token > /secrets/token; exec sleep 600"]
      }
    }
  }
}
`;

/** An HTTP call from inside a task, over TCP or the task API socket: prints "<status> <body>". */
const HTTP_PROBE = `
import http.client, json, socket, sys
method, path, body, target = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(target)
conn = Unix("localhost") if target.startswith("/") else http.client.HTTPConnection(*target.split(":"))
conn.request(method, path, body=body or None, headers={"Content-Type": "application/json"})
response = conn.getresponse()
print(response.status, response.read().decode()[:200])
`;

/**
 * Forks until refused. The children hold no output and leave once the probe
 * closes its end of their pipe; it reaps them, since the task's PID 1 (sleep)
 * would not, and zombies keep their pids.
 */
const FORK_PROBE = `
import os
read_end, write_end = os.pipe()
started = 0
for _ in range(${CLIENT_PIDS_LIMIT + 20}):
    try:
        pid = os.fork()
    except OSError as err:
        print("refused", err.errno, "after", started)
        break
    if pid == 0:
        os.close(write_end)
        os.close(1)
        os.close(2)
        os.read(read_end, 1)
        os._exit(0)
    started += 1
else:
    print("started", started)
os.close(write_end)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
`;

const RAW_EXEC_JOB = JSON.stringify({
  Job: {
    ID: "pwned",
    Name: "pwned",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/usr/bin/id" } }] }],
  },
});

interface Alloc {
  ID: string;
  TaskGroup: string;
  ClientStatus: string;
}

const agent = await testAgent("drover-e2e-escape-", { client: { pids_limit: CLIENT_PIDS_LIMIT } });
const allocs: Record<string, Alloc> = {};
const port = agent.address.split(":").at(-1)!;

async function inside(group: string, ...argv: string[]) {
  return agent.cli("alloc", "exec", allocs[group]!.ID, "--", ...argv);
}

const http = (group: string, method: string, path: string, target: string, body = "") => inside(group, PYTHON, "-c", HTTP_PROBE, method, path, body, target);

describe.skipIf(skip)("an exec task's escapes (issue 21)", () => {
  beforeAll(async () => {
    writeFileSync(join(agent.dir, "escapes.hcl"), JOB);
    await agent.start();
    expect((await agent.cli("job", "run", "-detach", join(agent.dir, "escapes.hcl"))).code).toBe(0);
    await waitFor("every alloc running", async () => {
      const list = await agent.get<Alloc[]>("/v1/job/escapes/allocations");
      for (const alloc of list) allocs[alloc.TaskGroup] = alloc;
      return list.length === 3 && list.every((alloc) => alloc.ClientStatus === "running");
    });
    // A task reports running once its own program runs; the victim has written its token by the time it sleeps.
    await waitFor("the victim's token", async () => (await agent.cli("alloc", "exec", allocs.victim!.ID, "cat", "/secrets/token")).stdout === "victim-token\n");
  });

  for (const group of ["nobody", "root"]) {
    describe(`as ${group}`, () => {
      test("1. the agent's API over TCP answers 403 Permission denied: no raw_exec job, no exec into another task", async () => {
        const target = `127.0.0.1:${port}`;
        const register = await http(group, "POST", "/v1/jobs", target, RAW_EXEC_JOB);
        expect(register.stdout).toBe("403 Permission denied\n");
        const exec = await http(group, "POST", `/v1/client/allocation/${allocs.victim!.ID}/exec`, target, JSON.stringify({ Task: "keeper", Cmd: ["cat", "/secrets/token"] }));
        expect(exec.stdout).toBe("403 Permission denied\n");
        expect((await http(group, "GET", "/v1/jobs", target)).stdout).toBe("403 Permission denied\n");
        expect((await fetch(`${agent.address}/v1/job/pwned`)).status).toBe(404);
      });

      test("1. its task API socket reads its own alloc, and nothing else", async () => {
        const socket = "/secrets/api.sock";
        const own = await http(group, "GET", `/v1/allocation/${allocs[group]!.ID}`, socket);
        expect(own.stdout).toStartWith(`200 {`);
        expect(own.stdout).toContain(allocs[group]!.ID);
        expect((await http(group, "GET", `/v1/allocation/${allocs.victim!.ID}`, socket)).stdout).toBe("403 Permission denied\n");
        expect((await http(group, "POST", "/v1/jobs", socket, RAW_EXEC_JOB)).stdout).toBe("403 Permission denied\n");
        expect((await http(group, "POST", `/v1/client/allocation/${allocs[group]!.ID}/exec`, socket, JSON.stringify({ Task: "probe", Cmd: ["id"] }))).stdout).toBe("403 Permission denied\n");
      });

      test("2. no user namespace, no cgroup mount; the task sits below the host's root in every hierarchy", async () => {
        const escape = await inside(group, "unshare", "-Urm", "--cgroup", "sh", "-c", "mkdir -p /tmp/cg && mount -t cgroup -o memory none /tmp/cg && echo mounted");
        expect(escape.stdout).not.toContain("mounted");
        expect(escape.stderr).toContain("Operation not permitted");
        const hostPid = await waitFor("the task's host pid", () => taskHostPid(allocs[group]!.ID));
        const atHostRoot = readFileSync(`/proc/${hostPid}/cgroup`, "utf8").split("\n").filter((line) => line.endsWith(":/"));
        expect(atHostRoot).toEqual([]);
      });

      test("3. a setuid copy left in alloc/data runs as whoever starts it on the host", async () => {
        const planted = await inside(group, "sh", "-c", `cp /usr/bin/id /alloc/data/id-${group} && chmod 4755 /alloc/data/id-${group} && echo planted`);
        expect(planted.stdout).toBe("planted\n");
        const hostCopy = join(agent.dataDir, "alloc", allocs[group]!.ID, "alloc", "data", `id-${group}`);
        chmodSync(agent.dir, 0o711);
        chmodSync(agent.dataDir, 0o711);
        // daemon (uid 1): neither the task's user nor root.
        const child = spawnProcess({ argv: [hostCopy, "-u"], env: {}, uid: 1, gid: 1, stdout: "pipe" });
        expect((await new Response(child.stdout).text()).trim()).toBe("1");
        await child.exited;
      });

      test("4. a fork bomb stops at the task's pids limit", async () => {
        const limit = group === "root" ? JOB_PIDS_LIMIT : CLIENT_PIDS_LIMIT;
        const bomb = await inside(group, PYTHON, "-c", FORK_PROBE);
        const refused = /refused 11 after (\d+)/.exec(bomb.stdout);
        expect(refused).not.toBeNull();
        // The task's sleep and the probe itself count too.
        expect(Number(refused![1])).toBeLessThanOrEqual(limit - 2);
      });

      test("5. /etc/shadow reads as empty", async () => {
        const shadow = await inside(group, "cat", "/etc/shadow");
        expect(shadow).toEqual({ code: 0, stdout: "", stderr: "" });
      });

      test("6. /proc/self/cgroup and the task's output descriptors name no host path", async () => {
        const cgroup = await inside(group, "cat", "/proc/self/cgroup");
        expect(cgroup.stdout.split("\n").filter(Boolean).every((line) => line.endsWith(":/"))).toBe(true);
        const logs = await agent.cli("alloc", "logs", allocs[group]!.ID, "probe");
        expect(logs.stdout).toBe("/alloc/logs/.probe.stdout.fifo\n/alloc/logs/.probe.stderr.fifo\n");
        expect(cgroup.stdout + logs.stdout).not.toContain(agent.dataDir);
      });
    });
  }
});

/** The host pid of an alloc's "probe" task: the process whose PID namespace's init it is. */
function taskHostPid(allocId: string): number | null {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cgroup = readFileSync(`/proc/${entry}/cgroup`, "utf8");
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      if (cgroup.includes(`/${allocId}.probe`) && /^NSpid:\s+\d+\s+1$/m.test(status)) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return null;
}
