/**
 * An isolated (exec) job, with the compiled binary and under Deno: the task runs in its
 * own namespaces as nobody, with a host volume bound read-write and read-only
 * in its root, `drover alloc exec` enters it, and a task that outgrows its
 * memory is reported "OOM Killed". Needs root and cgroups.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import { testAgent } from "../helpers/agent.ts";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { capabilities, tempDir, waitFor } from "../helpers/index.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";

const support = await detectIsolation();
const skip = !support.available || capabilities.cgroups.mode === "none";
if (skip) console.log(`skipping the exec e2e test: ${support.available ? "no cgroups" : support.reason}`);

// The host volume "site": a file to read, and room for nobody to write.
const volume = tempDir("drover-e2e-exec-volume-");
chmodSync(volume, 0o777);
writeFileSync(join(volume, "hello.txt"), "from-the-host-volume");

const JOB = `
job "iso" {
  type = "service"
  group "g" {
    network {
      mode = "none"
    }
    volume "site" {
      type   = "host"
      source = "site"
    }
    volume "site-ro" {
      type      = "host"
      source    = "site"
      read_only = true
    }
    task "box" {
      driver = "exec"
      volume_mount {
        volume      = "site"
        destination = "/srv/rw"
      }
      volume_mount {
        volume      = "site-ro"
        destination = "/local/ro"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \\"uid=$(id -u) host=$(hostname) dir=$NOMAD_TASK_DIR\\"; exec sleep 600"]
      }
      resources {
        memory = 64
      }
    }
  }
  group "hungry" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "eat" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "x=a; while true; do x=$x$x$x$x; done"]
      }
      resources {
        memory     = 16
        memory_max = 16
      }
    }
  }
}
`;

interface Alloc {
  ID: string;
  TaskGroup: string;
  ClientStatus: string;
  TaskStates: Record<string, { State: string; Failed: boolean; Events: { Type: string; DisplayMessage: string; Details: Record<string, string> }[] }> | null;
}

for (const runtime of droverRuntimes()) {
  const agent = await testAgent("drover-e2e-exec-", { client: { host_volume: { site: { path: volume } } } }, {}, runtime);

  describe.skipIf(skip)(`an exec job (${runtime.name})`, () => {
    test("runs isolated, accepts alloc exec, and reports an OOM kill", async () => {
      writeFileSync(join(agent.dir, "iso.hcl"), JOB);
      await agent.start();
      const { cli } = agent;
      expect((await cli("job", "run", "-detach", join(agent.dir, "iso.hcl"))).code).toBe(0);
      const allocs = () => agent.get<Alloc[]>("/v1/job/iso/allocations");

      const box = await waitFor("the box running", async () => (await allocs()).find((a) => a.TaskGroup === "g" && a.ClientStatus === "running"));
      const logs = await waitFor("the box's output", async () => (await cli("alloc", "logs", box.ID, "box")).stdout || null);
      expect(logs).toBe(`uid=65534 host=${box.ID.slice(0, 8)} dir=/local\n`);

      // Inside the task: its hostname, its PID 1 (the task, once its shell has exec'd sleep), and only loopback (network mode none).
      const script = "hostname; tr '\\0' ' ' < /proc/1/cmdline; echo; grep -c : /proc/net/dev";
      const inside = await waitFor("the task's shell to exec sleep", async () => {
        const result = await cli("alloc", "exec", box.ID, "--", "sh", "-c", script);
        return result.code !== 0 || result.stdout.includes("sleep 600") ? result : null;
      });
      expect(inside.stderr).toBe("");
      expect(inside.code).toBe(0);
      expect(inside.stdout.split("\n")).toEqual([box.ID.slice(0, 8), "sleep 600 ", "1", ""]);
      // The host volume, in the task's root only: readable, writable where asked, read-only where asked.
      const volumes = await cli("alloc", "exec", box.ID, "--", "sh", "-c", "cat /srv/rw/hello.txt; echo; echo hi > /srv/rw/from-box && echo wrote; touch /local/ro/x 2>&1");
      expect(volumes.stdout.split("\n").slice(0, 2)).toEqual(["from-the-host-volume", "wrote"]);
      expect(volumes.stdout).toContain("Read-only file system");
      expect(readFileSync(join(volume, "from-box"), "utf8")).toBe("hi\n");
      expect(mountsUnder(join(agent.dataDir, "alloc", box.ID)).filter((point) => point.includes("/srv") || point.includes("/local/"))).toEqual([]);
      const failing = await cli("alloc", "exec", box.ID, "--", "sh", "-c", "exit 7");
      expect(failing.code).toBe(7);

      const hungry = await waitFor("the hungry alloc failed", async () => (await allocs()).find((a) => a.TaskGroup === "hungry" && a.ClientStatus === "failed"));
      const eat = hungry.TaskStates!.eat!;
      expect(eat).toMatchObject({ State: "dead", Failed: true });
      const terminated = eat.Events.find((e) => e.Type === "Terminated");
      expect(terminated?.DisplayMessage).toContain('Exit Message: "OOM Killed"');
      expect(terminated?.Details.oom_killed).toBe("true");

      expect((await cli("job", "stop", "iso")).code).toBe(0);
      await waitFor("allocs complete", async () => (await allocs()).every((a) => a.ClientStatus !== "running"));
      await agent.executorsGone();
      agent.process.kill("SIGTERM");
      expect((await agent.process.exited).exitCode).toBe(0);
    });
  });
}
