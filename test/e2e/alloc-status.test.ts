/**
 * `drover alloc status` with the compiled binary and under Deno shows what a running
 * task uses beside what it reserved, as Nomad's does, and `-stats` every
 * measured figure.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";
import { waitFor } from "../helpers/index.ts";

for (const runtime of droverRuntimes()) {
  describe(`drover alloc status (${runtime.name})`, async () => {
    const agent = await testAgent("drover-alloc-status-", {}, {}, runtime);
    await agent.start();

    test("a running task's CPU and memory beside its reservation; -stats adds the tables", async () => {
      const path = join(agent.dir, "usage.hcl");
      writeFileSync(
        path,
        `job "usage" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "x=$(head -c 4000000 /dev/zero | tr '\\\\0' a); exec sleep 600"]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`,
      );
      expect((await agent.cli("job", "run", path)).code).toBe(0);
      const [alloc] = await agent.get<{ ID: string }[]>("/v1/job/usage/allocations");
      // The first stats sample comes a collection interval after the start.
      const status = await waitFor("a usage sample", async () => {
        const result = await agent.cli("alloc", "status", alloc!.ID);
        return /\d+(\.\d)? (B|KiB|MiB)\/64 MiB/.test(result.stdout) ? result : undefined;
      });
      expect(status.stderr).toBe("");
      expect(status.stdout).toMatch(/CPU\s+Memory\s+Disk\s+Addresses\n\d+\/100 MHz\s+\d+(\.\d)? (B|KiB|MiB)\/64 MiB\s+300 MiB\s*\n/);

      const detailed = await agent.cli("alloc", "status", "-stats", alloc!.ID);
      expect(detailed.stdout).toMatch(/Memory Stats\n.*RSS.*\n/);
      expect(detailed.stdout).toMatch(/CPU Stats\nPercent\s+System Mode.*\n\d+\.\d\d%/);

      expect((await agent.cli("job", "stop", "-purge", "usage")).code).toBe(0);
      await agent.executorsGone();
    }, 60_000);
  });
}
