/**
 * ephemeral_disk { size } through the compiled binary. Where the host lets
 * the agent give each alloc dir a file system of its own (root, loop
 * devices, mkfs.ext4), a write past the size fails in the task with ENOSPC
 * and the host's disk holds no more than the size; elsewhere the alloc is
 * measured, and a task that writes past its size is stopped and says why.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { imageBytes } from "../../src/client/allocdir/disk-image.ts";
import { hardDiskLimit as hardLimit } from "../helpers/disk-images.ts";
import { testAgent } from "../helpers/agent.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";
import { pidsWithEnv, waitFor } from "../helpers/index.ts";

/** A job of one raw_exec task, marked DISK_LIMIT_TEST=`mark`, running `script` in a 10 MB alloc (logs 1 MB). */
function diskJob(name: string, mark: string, script: string, groupExtra = ""): string {
  return `
job "${name}" {
  group "g" {
    ${groupExtra}
    ephemeral_disk {
      size = 10
    }
    task "writer" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "${script}"]
      }
      env {
        DISK_LIMIT_TEST = "${mark}"
      }
      logs {
        max_files     = 1
        max_file_size = 1
      }
    }
  }
}
`;
}

/** Writes 28 MB, then reports how it went and frees the space (its log lives on the same file system). */
const HARD_JOB = diskJob(
  "hard-disk",
  "hard-writer",
  "head -c 29360128 /dev/zero > $NOMAD_ALLOC_DIR/data/blob; status=$?; size=$(stat -c %s $NOMAD_ALLOC_DIR/data/blob); rm $NOMAD_ALLOC_DIR/data/blob; echo head=$status size=$size; exec sleep 600",
);

const JOB = diskJob("disk", "writer", "head -c 29360128 /dev/zero > $NOMAD_ALLOC_DIR/data/blob; exec sleep 600", `restart {
      attempts = 0
      mode     = "fail"
    }`);

interface Alloc {
  ClientStatus: string;
  TaskStates: Record<string, { Failed: boolean; Events: { Type: string; DiskLimit?: number; DisplayMessage: string }[] }>;
}

for (const runtime of droverRuntimes()) {
  describe(`ephemeral_disk size (${runtime.name})`, async () => {
    const agent = await testAgent("drover-ephemeral-disk-", {}, {}, runtime);
    await agent.start();

    test.skipIf(!hardLimit)("a task that writes 28 MB into a 10 MB alloc gets ENOSPC at the size and keeps running; the host holds no more than the size", async () => {
      const jobFile = join(agent.dir, "hard-disk.hcl");
      writeFileSync(jobFile, HARD_JOB);
      const run = await agent.cli("job", "run", "-detach", jobFile);
      expect(run).toMatchObject({ code: 0 });
      const stub = await waitFor("the alloc placed", async () => (await agent.get<{ ID: string }[]>("/v1/job/hard-disk/allocations"))[0]);
      const log = join(agent.dataDir, "alloc", stub.ID, "alloc", "logs", "writer.stdout.0");
      const line = await waitFor("the writer's report", () => {
        try {
          return /head=(\d+) size=(\d+)/.exec(readFileSync(log, "utf8"));
        } catch {
          return null;
        }
      }, { timeoutMs: 30_000 });
      expect(Number(line[1])).not.toBe(0);
      expect(Number(line[2])).toBeGreaterThanOrEqual(10 * 2 ** 20);
      expect(Number(line[2])).toBeLessThan(imageBytes(10));
      const image = join(`${join(agent.dataDir, "alloc")}.disks`, `${stub.ID}.img`);
      expect(statSync(image).blocks * 512).toBeLessThanOrEqual(imageBytes(10));
      const alloc = await agent.get<Alloc>(`/v1/allocation/${stub.ID}`);
      expect(alloc.ClientStatus).toBe("running");
      expect((await agent.cli("job", "stop", "-purge", "hard-disk")).code).toBe(0);
      await waitFor("the hard writer to be gone", () => pidsWithEnv("DISK_LIMIT_TEST", "hard-writer").length === 0);
    });

    test('with client.disk_limit = "poll" (or no means to mount images), a task that writes 28 MB into a 10 MB alloc is killed, the alloc fails, and the event names the limit', async () => {
      const agent = await testAgent("drover-ephemeral-disk-poll-", { client: { disk_limit: "poll" } }, {}, runtime);
      await agent.start();
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
    }, 60_000);
  });
}
