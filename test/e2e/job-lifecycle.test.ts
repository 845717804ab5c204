/**
 * A job's whole life, as an operator lives it, with the compiled binary and
 * again under Deno:
 * `drover job run` an HCL job with two groups, see the processes, their
 * environment and their logs, SIGKILL the agent, start it again, find the
 * same task processes still running and their allocs still running, then
 * `drover job stop` and find nothing left.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { capabilities, isRunning, parentPid, pidsWithEnv, processEnv, processState, waitFor } from "../helpers/index.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";

interface AllocStub {
  ID: string;
  TaskGroup: string;
  ClientStatus: string;
  DesiredStatus: string;
}

const JOB = `
job "e2e" {
  datacenters = ["dc1"]
  type        = "service"

  group "web" {
    network {
      port "http" {}
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \\"web $NOMAD_ALLOC_ID $GREETING port=$NOMAD_PORT_http\\"; exec sleep 600"]
      }
      env {
        GREETING = "hello-\${NOMAD_GROUP_NAME}"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }

  group "worker" {
    count = 2
    task "loop" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \\"worker \${NOMAD_ALLOC_INDEX}\\" >&2; exec sleep 600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

for (const runtime of droverRuntimes()) {
  const agent = await testAgent("drover-e2e-", { telemetry: { publish_allocation_metrics: true } }, {}, runtime);

  describe(`a job's life (${runtime.name})`, () => {
    test("run, inspect, survive an agent SIGKILL, stop", async () => {
      const jobFile = join(agent.dir, "e2e.hcl");
      writeFileSync(jobFile, JOB);
      const { cli } = agent;
      const allocs = () => agent.get<AllocStub[]>("/v1/job/e2e/allocations");
      const taskPid = (allocId: string) => {
        const pids = pidsWithEnv("NOMAD_ALLOC_ID", allocId).filter((pid) => processState(pid) !== null);
        // The task is the process that carries the alloc's env and is not a drover helper.
        return pids.find((pid) => !processEnv(pid)?.DROVER_ROLE_HANDSHAKE);
      };

      await agent.start();
      const run = await cli("job", "run", jobFile);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const placed = await waitFor("three running allocs", async () => {
        const list = await allocs();
        return list.length === 3 && list.every((a) => a.ClientStatus === "running") ? list : null;
      });
      expect(placed.map((a) => a.TaskGroup).sort()).toEqual(["web", "worker", "worker"]);

      // Processes and their environment.
      // Running means started: a task spawned a moment ago may not have reached its execve yet.
      const pids = new Map(await Promise.all(placed.map(async (a) => [a.ID, await waitFor(`the task of ${a.ID}`, () => taskPid(a.ID))] as const)));
      for (const [id, pid] of pids) {
        expect(isRunning(pid)).toBe(true);
        const taskEnv = processEnv(pid)!;
        expect(taskEnv.NOMAD_ALLOC_ID).toBe(id);
        expect(Object.keys(taskEnv).filter((name) => name.startsWith("BUN_") || name.startsWith("DENO_"))).toEqual([]);
        // Once the shell has exec'd sleep: only fds 0-2, and a cgroup of its own that its executor is not in.
        await waitFor(`task ${pid} to exec sleep`, () => readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("sleep\0"));
        expect(readdirSync(`/proc/${pid}/fd`).sort()).toEqual(["0", "1", "2"]);
        if (capabilities.cgroups.mode !== "none") {
          expect(readFileSync(`/proc/${pid}/cgroup`, "utf8")).toContain(id);
          expect(readFileSync(`/proc/${parentPid(pid)}/cgroup`, "utf8")).not.toContain(id);
        }
      }
      const web = placed.find((a) => a.TaskGroup === "web")!;
      const webEnv = processEnv(pids.get(web.ID)!)!;
      expect(webEnv.GREETING).toBe("hello-web");
      expect(webEnv.NOMAD_TASK_NAME).toBe("server");
      expect(Number(webEnv.NOMAD_PORT_http)).toBeGreaterThanOrEqual(20000);

      // Logs, through the CLI.
      const webLogs = await waitFor("web's stdout", async () => {
        const out = await cli("alloc", "logs", web.ID, "server");
        return out.stdout.includes("web ") ? out.stdout : null;
      });
      expect(webLogs).toBe(`web ${web.ID} hello-web port=${webEnv.NOMAD_PORT_http}\n`);
      const worker = placed.find((a) => a.TaskGroup === "worker")!;
      const workerLogs = await waitFor("worker's stderr", async () => (await cli("alloc", "logs", "-stderr", worker.ID, "loop")).stdout || null);
      expect(workerLogs).toMatch(/^worker [01]\n$/);

      // Usage, from the task's cgroup, in Nomad's AllocResourceUsage shape.
      const stats = await waitFor("web's stats", async () => {
        const body = await agent.get<{
          ResourceUsage: { MemoryStats: { Usage: number; Measured: string[] } };
          Tasks: Record<string, { Pids: Record<string, unknown> }>;
        }>(`/v1/client/allocation/${web.ID}/stats`);
        return body.Tasks.server ? body : null;
      });
      if (capabilities.cgroups.mode !== "none") {
        expect(stats.ResourceUsage.MemoryStats.Usage).toBeGreaterThan(0);
        expect(stats.ResourceUsage.MemoryStats.Measured).toContain("Usage");
      }
      expect(Object.keys(stats.Tasks.server!.Pids)).toContain(String(pids.get(web.ID)));

      // The same usage as Nomad's per-task gauges.
      const gauges = async () => (await agent.get<{ Gauges: { Name: string; Labels: Record<string, string> }[] }>("/v1/metrics")).Gauges;
      await waitFor("web's rss gauge", async () =>
        (await gauges()).some((g) => g.Name === "nomad.client.allocs.memory.rss" && g.Labels.alloc_id === web.ID && g.Labels.task === "server"),
      );

      // SIGKILL the agent: the tasks keep running, unrestarted.
      agent.process.kill("SIGKILL");
      await agent.process.exited;
      for (const pid of pids.values()) expect(isRunning(pid!)).toBe(true);
      await agent.start();
      const restored = await waitFor("allocs running after the restart", async () => {
        const list = await allocs();
        return list.length === 3 && list.every((a) => a.ClientStatus === "running") ? list : null;
      });
      expect(restored.map((a) => a.ID).sort()).toEqual(placed.map((a) => a.ID).sort());
      for (const [id, pid] of pids) expect(taskPid(id)).toBe(pid);
      const webState = await agent.get<{ TaskStates: Record<string, { State: string; Restarts: number; Events: { Type: string }[] }> }>(
        `/v1/allocation/${web.ID}`,
      );
      expect(webState.TaskStates.server!.State).toBe("running");
      expect(webState.TaskStates.server!.Restarts).toBe(0);
      expect(webState.TaskStates.server!.Events.filter((e) => e.Type === "Started").length).toBe(1);

      // Stop: every task process and every executor ends.
      const stop = await cli("job", "stop", "e2e");
      expect(stop.code).toBe(0);
      await waitFor("allocs complete", async () => (await allocs()).every((a) => a.ClientStatus === "complete"));
      for (const pid of pids.values()) await waitFor(`task ${pid} gone`, () => !isRunning(pid!));
      await agent.executorsGone();
      expect((await gauges()).filter((g) => g.Name.startsWith("nomad.client.allocs."))).toEqual([]);

      agent.process.kill("SIGTERM");
      expect((await agent.process.exited).exitCode).toBe(0);
    });
  });
}
