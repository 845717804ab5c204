/**
 * The task hooks of a real Nomad job file, with the compiled binary and under Deno: an
 * artifact fetched from a local HTTP server (a checksummed tar.gz, unpacked
 * into the task dir), a template rendered from it and the task's env that
 * restarts the task when its input changes, a native service whose
 * http check reaches the task, listed by GET /v1/service/:name, and a host
 * volume from the agent's config, bound read-write and read-only into the
 * task's dir.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "tar";
import { testAgent } from "../helpers/agent.ts";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { capabilities, tempDir, waitFor } from "../helpers/index.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";


// The artifact: site/value.txt in a tar.gz, served from this test's own HTTP server.
const work = tempDir("drover-e2e-artifact-");
mkdirSync(join(work, "site"));
writeFileSync(join(work, "site", "value.txt"), "from-the-artifact");
const archive = join(work, "site.tar.gz");
await create({ gzip: true, file: archive, cwd: work }, ["site"]);
const bytes = readFileSync(archive);
const sha256 = createHash("sha256").update(bytes).digest("hex");
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(bytes) });
afterAll(() => server.stop(true));

// The host volume the agent offers as "site": a file the task reads, and room for one it writes.
const volume = tempDir("drover-e2e-volume-");
writeFileSync(join(volume, "hello.txt"), "from-the-host-volume");

// The task: a small HTTP server (this test's own Bun) answering with the rendered template and what it
// found in its volumes: the read-write one's file, and what writing to the read-only one gave.
const SERVE = [
  "const fs = require('fs');",
  "let ro = 'writable'; try { fs.writeFileSync('srv/ro/x', 'x'); } catch (err) { ro = err.code; }",
  "fs.writeFileSync('srv/data/from-task.txt', 'written by ' + process.env.NOMAD_ALLOC_ID);",
  "Bun.serve({ port: Number(process.env.NOMAD_PORT_http), hostname: '127.0.0.1', fetch: () => new Response(fs.readFileSync('local/config.txt') + 'volume=' + fs.readFileSync('srv/data/hello.txt') + ' ro=' + ro) });",
].join(" ");

const JOB = `
job "hooks" {
  datacenters = ["dc1"]

  group "web" {
    network {
      port "http" {}
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

    service {
      name     = "hooks-web"
      port     = "http"
      provider = "nomad"
      tags     = ["e2e"]

      check {
        type     = "http"
        path     = "/"
        interval = "1s"
        timeout  = "1s"
      }
    }

    task "server" {
      driver = "raw_exec"

      artifact {
        source      = "http://127.0.0.1:${server.port}/site.tar.gz"
        destination = "local"
        options {
          checksum = "sha256:${sha256}"
        }
      }

      template {
        data        = <<EOT
artifact={{ file "local/site/value.txt" }} input={{ file "local/input.txt" | trimSpace }} port={{ env "NOMAD_PORT_http" }}
EOT
        destination = "local/config.txt"
        change_mode = "restart"
        splay       = "100ms"
      }

      volume_mount {
        volume      = "site"
        destination = "/srv/data"
      }

      volume_mount {
        volume      = "site-ro"
        destination = "/srv/ro"
      }

      config {
        command = "${process.execPath}"
        args    = ["-e", "${SERVE.replaceAll('"', '\\"')}"]
      }

      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`;

interface Registration {
  ServiceName: string;
  Address: string;
  Port: number;
  AllocID: string;
  Tags: string[];
}

interface Alloc {
  ID: string;
  ClientStatus: string;
  TaskStates: Record<string, { State: string; Restarts: number; Events: { Type: string; RestartReason?: string }[] }> | null;
}

for (const runtime of droverRuntimes()) {
  const agent = await testAgent("drover-e2e-hooks-", { client: { host_volume: { site: { path: volume } } } }, {}, runtime);

  // Binding a raw_exec task's volumes into its dir is the agent's own mount: root only.
  describe.skipIf(!capabilities.root)(`task hooks (${runtime.name})${capabilities.root ? "" : " (skipped: host volumes need root)"}`, () => {
    test("artifact, template with change_mode restart, a checked native service and a host volume run end to end", async () => {
      await agent.start();
      const jobFile = join(agent.dir, "hooks.hcl");
      writeFileSync(jobFile, JOB);
      const run = await agent.cli("job", "run", "-detach", jobFile);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);

      const [alloc] = await waitFor("the alloc running", async () => {
        const allocs = await agent.get<Alloc[]>("/v1/job/hooks/allocations");
        return allocs.length === 1 && allocs[0]!.ClientStatus === "running" ? allocs : undefined;
      }, { timeoutMs: 30_000 });

      const [instance] = await waitFor("the service registered", async () => {
        const found = await agent.get<Registration[]>("/v1/service/hooks-web");
        return found.length === 1 ? found : undefined;
      });
      expect(instance).toMatchObject({ ServiceName: "hooks-web", AllocID: alloc!.ID, Tags: ["e2e"] });
      expect(await agent.get<unknown>("/v1/services")).toEqual([{ Namespace: "default", Services: [{ ServiceName: "hooks-web", Tags: ["e2e"] }] }]);

      // The template rendered the unpacked artifact and the task's own port; the check's address serves it.
      // The volume's file was read in the task, and the read-only mount refused its write.
      const served = await waitFor("the task serving", async () => (await fetch(`http://${instance!.Address}:${instance!.Port}/`).catch(() => null))?.text());
      expect(served.trim()).toBe(`artifact=from-the-artifact input= port=${instance!.Port}\nvolume=from-the-host-volume ro=EROFS`);
      expect(readFileSync(join(volume, "from-task.txt"), "utf8")).toBe(`written by ${alloc!.ID}`);

      // A changed input re-renders the template, and change_mode restart restarts the task.
      writeFileSync(join(agent.dataDir, "alloc", alloc!.ID, "server", "local", "input.txt"), "changed\n");
      const restarted = await waitFor("the restart", async () => {
        const current = await agent.get<Alloc>(`/v1/allocation/${alloc!.ID}`);
        const state = current.TaskStates?.server;
        return state && state.State === "running" && state.Events.some((e) => e.RestartReason === "template with change_mode restart re-rendered") ? state : undefined;
      }, { timeoutMs: 20_000 });
      expect(restarted.Events.map((e) => e.Type)).toContain("Restart Signaled");
      const after = await waitFor("the new content", async () => {
        const text = await (await fetch(`http://${instance!.Address}:${instance!.Port}/`).catch(() => null))?.text();
        return text?.includes("input=changed") ? text : undefined;
      });
      expect(after.trim()).toBe(`artifact=from-the-artifact input=changed port=${instance!.Port}\nvolume=from-the-host-volume ro=EROFS`);

      // Stopping the job deregisters the service.
      expect((await agent.cli("job", "stop", "hooks")).code).toBe(0);
      await waitFor("the service gone", async () => (await agent.get<Registration[]>("/v1/service/hooks-web")).length === 0);
      await agent.executorsGone();
      // The stopped alloc stays for inspection, without its volumes: they went with the task.
      await waitFor("the volumes unbound", () => mountsUnder(join(agent.dataDir, "alloc", alloc!.ID)).every((point) => !point.includes("/srv/")));
      expect(readFileSync(join(volume, "hello.txt"), "utf8")).toBe("from-the-host-volume");
    }, 90_000);
  });
}
