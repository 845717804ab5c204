/** ephemeral_disk { size } through the compiled binary: a task that writes past it is stopped, and says why. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";
import { pidsWithEnv, waitFor } from "../helpers/index.ts";

const JOB = `
job "disk" {
  type = "service"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    ephemeral_disk {
      size = 10
    }
    task "writer" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "head -c 29360128 /dev/zero > $NOMAD_ALLOC_DIR/data/blob; exec sleep 600"]
      }
      env {
        DISK_LIMIT_TEST = "writer"
      }
      logs {
        max_files     = 1
        max_file_size = 1
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

interface Alloc {
  ClientStatus: string;
  TaskStates: Record<string, { Failed: boolean; Events: { Type: string; DiskLimit?: number; DisplayMessage: string }[] }>;
}

for (const runtime of droverRuntimes()) {
  describe(`ephemeral_disk size (${runtime.name})`, async () => {
    const agent = await testAgent("drover-ephemeral-disk-", {}, {}, runtime);
    await agent.start();

    test("a task that writes 28 MB into a 10 MB alloc is killed, the alloc fails, and the event names the limit", async () => {
      const jobFile = join(agent.dir, "disk.hcl");
      writeFileSync(jobFile, JOB);
      expect((await agent.cli("job", "run", "-detach", jobFile)).code).toBe(0);
      let alloc: Alloc | undefined;
      await waitFor(
        "the alloc to fail",
        async () => {
          const [stub] = await agent.get<{ ID: string }[]>("/v1/job/disk/allocations");
          alloc = stub && (await agent.get<Alloc>(`/v1/allocation/${stub.ID}`));
          return alloc?.ClientStatus === "failed";
        },
        { timeoutMs: 30_000 },
      );
      const writer = alloc!.TaskStates.writer!;
      expect(writer.Failed).toBe(true);
      const exceeded = writer.Events.find((event) => event.Type === "Disk Resources Exceeded");
      expect(exceeded?.DiskLimit).toBe(10);
      expect(exceeded?.DisplayMessage).toMatch(/over its ephemeral_disk size of 10 MB/);
      await waitFor("the writer to be gone", () => pidsWithEnv("DISK_LIMIT_TEST", "writer").length === 0);
    });
  });
}
