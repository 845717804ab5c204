/**
 * A Nomad docker job on the compiled agent and under Deno, from a real registry (Debian's
 * docker-registry on 127.0.0.1; the image built with umoci from
 * busybox-static and pushed with skopeo): its stdout reaches `alloc logs`,
 * `alloc exec` lands in the container, the task survives an agent restart
 * (reattached, not restarted), and stopping it leaves no mount; an image's
 * non-root user reads its template and identity in /secrets. Keys drover
 * does not serve are refused by name when the job is submitted. Needs root
 * and cgroups.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { testAgent } from "../helpers/agent.ts";
import { capabilities, tempDir, waitFor } from "../helpers/index.ts";
import { buildImage, missingTools, TestRegistry } from "../helpers/registry.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";

const support = await detectIsolation();
const missing = missingTools();
const why = !support.available ? support.reason : capabilities.cgroups.mode === "none" ? "no cgroups" : missing.length > 0 ? `missing Debian packages ${missing.join(", ")}` : null;
if (why) console.log(`skipping the docker e2e test: ${why}`);

const dir = tempDir("drover-e2e-docker-build-");
let registry: TestRegistry | undefined;
afterAll(() => registry?.stop());

const job = (image: string, extra = "") => `
job "web" {
  group "g" {
    task "app" {
      driver = "docker"
      config {
        image = "${image}"
        ports = ["http"]
        labels {
          team = "ignored"
        }
        ${extra}
      }
      env {
        FROM_JOB = "job"
      }
      resources {
        memory = 64
      }
    }
    network {
      port "http" {}
    }
  }
}
`;

interface Alloc {
  ID: string;
  ClientStatus: string;
  TaskStates: Record<string, { State: string; Restarts: number }> | null;
}

/** One registry for every runtime's agent, started by the first test that needs it. */
async function theRegistry(): Promise<TestRegistry> {
  if (registry) return registry;
  registry = await TestRegistry.start(dir);
  const layout = buildImage(join(dir, "build"), "web", {
    files: { "/etc/motd": "served by an image\n" },
    env: ["FROM_IMAGE=image", "PATH=/bin"],
    cmd: ["/bin/sh", "-c", "cat /etc/motd; echo from_image=$FROM_IMAGE from_job=$FROM_JOB port=$NOMAD_PORT_http; exec sleep 600"],
  });
  registry.push(layout, "web", "test/web:1");
  // USER nobody: reads what the template and identity hooks put in /secrets.
  const nobody = buildImage(join(dir, "build"), "nobody", {
    env: ["PATH=/bin"],
    user: "65534:65534",
    cmd: ["/bin/sh", "-c", "id -u; cat /secrets/greeting; test -s /secrets/nomad_token && echo token-readable; exec sleep 600"],
  });
  registry.push(nobody, "nobody", "test/nobody:1");
  return registry;
}

const secretsJob = (image: string) => `
job "secret" {
  group "g" {
    task "app" {
      driver = "docker"
      config {
        image = "${image}"
        readonly_rootfs = true
      }
      identity {
        file = true
      }
      template {
        data        = <<EOT
hello {{ env "NOMAD_TASK_NAME" }}
EOT
        destination = "secrets/greeting"
      }
      resources {
        memory = 64
      }
    }
  }
}
`;

for (const runtime of droverRuntimes()) {
  const agent = await testAgent("drover-e2e-docker-", {}, {}, runtime);

  describe.skipIf(why !== null)(`a docker job (${runtime.name})`, () => {
    test("runs from a registry, logs, accepts alloc exec, survives an agent restart, and leaves no mount", async () => {
      const registry = await theRegistry();
      // Interpolated on the node, as Nomad does: the tag comes from the job's meta.
      writeFileSync(join(agent.dir, "web.hcl"), job(`${registry.host}/test/web:\${NOMAD_META_tag}`).replace('job "web" {', 'job "web" {\n  meta {\n    tag = "1"\n  }'));
      await agent.start();
      const { cli } = agent;
      const run = await cli("job", "run", "-detach", join(agent.dir, "web.hcl"));
      expect(run.stderr).toBe("");
      const allocs = () => agent.get<Alloc[]>("/v1/job/web/allocations");
      const alloc = await waitFor("the alloc running", async () => (await allocs()).find((a) => a.ClientStatus === "running"), { timeoutMs: 60_000 });
      const logs = await waitFor("the task's output", async () => (await cli("alloc", "logs", alloc.ID, "app")).stdout || null);
      expect(logs).toMatch(/^served by an image\nfrom_image=image from_job=job port=\d+\n$/);

      const events = (await agent.get<{ TaskStates: Record<string, { Events: { Type: string; DisplayMessage: string }[] }> }>(`/v1/allocation/${alloc.ID}`)).TaskStates.app!.Events;
      const driverMessages = events.filter((event) => event.Type === "Driver").map((event) => event.DisplayMessage);
      expect(driverMessages[0]).toBe("Downloading image");
      expect(driverMessages[1]).toMatch(new RegExp(`^Downloaded image ${registry.host}/test/web:1: 1 layers, [\\d.]+ MiB$`));
      const inside = await cli("alloc", "exec", alloc.ID, "--", "cat", "/etc/motd");
      expect(inside).toMatchObject({ code: 0, stdout: "served by an image\n" });
      const nodeId = (await agent.get<{ ID: string }[]>("/v1/nodes"))[0]!.ID;
      const node = await agent.get<{ Attributes: Record<string, string>; Drivers: Record<string, { Healthy: boolean }> }>(`/v1/node/${nodeId}`);
      expect(node.Attributes["driver.docker"]).toBe("1");
      expect(node.Drivers.docker?.Healthy).toBe(true);

      // SIGKILL the agent: the container keeps running and is reattached, not restarted.
      const pidBefore = (await cli("alloc", "exec", alloc.ID, "--", "cat", "/proc/1/cmdline")).stdout;
      agent.process.kill("SIGKILL");
      await agent.process.exited;
      await agent.start();
      const after = await waitFor("the alloc running after the restart", async () => (await allocs()).find((a) => a.ID === alloc.ID && a.ClientStatus === "running"));
      expect(after.TaskStates?.app?.Restarts).toBe(0);
      expect((await cli("alloc", "exec", alloc.ID, "--", "cat", "/proc/1/cmdline")).stdout).toBe(pidBefore);
      expect(readFileSync(join(agent.dataDir, "alloc", alloc.ID, "alloc/logs/app.stdout.0"), "utf8")).toBe(logs);

      expect((await cli("job", "stop", "web")).code).toBe(0);
      await waitFor("the alloc stopped", async () => (await allocs()).every((a) => a.ClientStatus !== "running"));
      await agent.executorsGone();
      const taskDir = join(agent.dataDir, "alloc", alloc.ID, "app");
      expect(mountsUnder(taskDir).filter((point) => !point.endsWith("/secrets"))).toEqual([]);
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(taskDir + "/.rootfs");
    }, 120_000);

    test("an image's non-root user reads its template and identity in /secrets", async () => {
      const registry = await theRegistry();
      writeFileSync(join(agent.dir, "secret.hcl"), secretsJob(`${registry.host}/test/nobody:1`));
      // The test before leaves its agent running.
      if (!(await agent.fetch("/v1/agent/health").catch(() => null))?.ok) await agent.start();
      expect((await agent.cli("job", "run", "-detach", join(agent.dir, "secret.hcl"))).stderr).toBe("");
      const alloc = await waitFor("the alloc running", async () => (await agent.get<Alloc[]>("/v1/job/secret/allocations")).find((a) => a.ClientStatus === "running"), { timeoutMs: 60_000 });
      const logs = await waitFor("the task's output", async () => {
        const out = (await agent.cli("alloc", "logs", alloc.ID, "app")).stdout;
        return out.includes("token-readable") ? out : null;
      });
      expect(logs).toBe("65534\nhello app\ntoken-readable\n");
      expect((await agent.cli("job", "stop", "secret")).code).toBe(0);
      await waitFor("the alloc stopped", async () => (await agent.get<Alloc[]>("/v1/job/secret/allocations")).every((a) => a.ClientStatus !== "running"));
    }, 120_000);

    test("keys drover does not serve are refused by name when the job is submitted", async () => {
      writeFileSync(join(agent.dir, "bad.hcl"), job("busybox", 'security_opt = ["seccomp=unconfined"]\n        network_mode = "weave"'));
      const refused = await agent.cli("job", "run", "-detach", join(agent.dir, "bad.hcl"));
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain("security_opt: unknown field (not one the docker driver takes on drover");
      expect(refused.stderr).toContain('network_mode: must be "host", "none" or "bridge"');
    });
  });
}
