/**
 * ephemeral_disk { sticky = true } through a job update, with the compiled
 * binary and under Deno: the replacement alloc waits for the one it replaces and takes over
 * its alloc/data, so what the old task wrote is there for the new one.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { waitFor } from "../helpers/index.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";

const job = (version: string) => `
job "sticky" {
  type = "service"
  group "db" {
    ephemeral_disk {
      sticky = true
      size   = 300
    }
    task "writer" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $VERSION >> $NOMAD_ALLOC_DIR/data/history; exec sleep 600"]
      }
      env {
        VERSION = "${version}"
      }
      resources {
        memory = 32
      }
    }
  }
}
`;

interface Alloc {
  ID: string;
  ClientStatus: string;
  DesiredStatus: string;
  PreviousAllocation: string;
}

for (const runtime of droverRuntimes()) {
  const agent = await testAgent("drover-e2e-sticky-", {}, {}, runtime);

  describe(`sticky ephemeral disk across a job update (${runtime.name})`, () => {
    test("the replacement alloc gets the data the old one wrote", async () => {
      await agent.start();
      const run = async (version: string) => {
        const file = join(agent.dir, `sticky-${version}.hcl`);
        writeFileSync(file, job(version));
        const result = await agent.cli("job", "run", "-detach", file);
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
      };
      const allocs = () => agent.get<Alloc[]>("/v1/job/sticky/allocations");
      const history = (alloc: string) => join(agent.dataDir, "alloc", alloc, "alloc", "data", "history");

      await run("v1");
      const first = await waitFor("v1 running", async () => (await allocs()).find((a) => a.ClientStatus === "running"));
      await waitFor("v1 wrote its history", () => existsSync(history(first.ID)) && readFileSync(history(first.ID), "utf8") === "v1\n");

      await run("v2");
      const second = await waitFor("v2 running", async () =>
        (await allocs()).find((a) => a.ID !== first.ID && a.DesiredStatus === "run" && a.ClientStatus === "running"),
      );
      expect(second.PreviousAllocation).toBe(first.ID);
      await waitFor("v2 appended to the moved history", () => existsSync(history(second.ID)) && readFileSync(history(second.ID), "utf8") === "v1\nv2\n");
      expect(existsSync(history(first.ID))).toBe(false);

      expect((await agent.cli("job", "stop", "sticky")).code).toBe(0);
      await agent.executorsGone();
      agent.process.kill("SIGTERM");
      expect((await agent.process.exited).exitCode).toBe(0);
    });
  });
}
