import { describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ServerError } from "../../src/server/errors.ts";
import { Server } from "../../src/server/server.ts";
import { allocIndex } from "../../src/structs/alloc.ts";
import { capabilities, sleep, tempDir } from "../helpers/index.ts";
import { openTestServer, testJob, testNode } from "./fixtures.ts";

/** Starts the writer, waits until it is busy, SIGKILLs it after a random moment. */
async function killWriterMidWrite(dataDir: string, nodeId: string): Promise<void> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "crash-writer.ts"), dataDir, nodeId], { stdout: "pipe", stderr: "inherit" });
  try {
    const reader = child.stdout.getReader();
    let seen = "";
    while (!seen.includes("ready")) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error("the writer exited before it was ready");
      seen += new TextDecoder().decode(chunk.value);
    }
    await sleep(Math.random() * 150);
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
}

describe("crash consistency", () => {
  test("a SIGKILL at any point of a job update leaves one consistent version", async () => {
    const dataDir = tempDir("drover-crash-");
    const nodeId = randomUUID();
    for (let round = 0; round < 3; round++) {
      await killWriterMidWrite(dataDir, nodeId);
      // Opening checks every row against its schema and every alloc's job version.
      const { server } = openTestServer({ dataDir });
      const job = server.jobs.get("crash");
      const live = server.nodes.allocations(nodeId).filter((alloc) => alloc.DesiredStatus === "run");
      for (const group of job.TaskGroups) {
        const allocs = live.filter((alloc) => alloc.TaskGroup === group.Name);
        // Exactly one alloc per index, all of the job's current version.
        expect(allocs.map((alloc) => allocIndex(alloc.Name)).sort()).toEqual([...Array(group.Count).keys()]);
        expect(allocs.every((alloc) => alloc.Job.JobModifyIndex === job.JobModifyIndex)).toBe(true);
      }
      expect(server.allocs.list().every((alloc) => alloc.ModifyIndex <= server.index)).toBe(true);
      expect(server.jobs.get("crash").ModifyIndex).toBeLessThanOrEqual(server.index);
      server.close();
    }
  });
});

describe("a full disk", () => {
  test.skipIf(!capabilities.root)("SQLITE_FULL fails the register with a clear error and changes nothing (needs root for a tmpfs)", async () => {
    const mount = join(tempDir("drover-full-"), "fs");
    mkdirSync(mount);
    const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount]);
    if (mounted.exitCode !== 0) throw new Error(`mount failed: ${mounted.stderr.toString()}`);
    try {
      // freeBytes says "plenty", so SQLite itself runs into the full disk.
      const server = Server.open({ dataDir: mount, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12 });
      server.nodes.upsert(testNode());
      const padding = "x".repeat(16 * 1024);
      let error: unknown;
      let registered = 0;
      for (let i = 0; i < 200 && !error; i++) {
        const index = server.index;
        try {
          server.jobs.register(testJob(`fill-${i}`, { meta: { padding } }));
          registered++;
        } catch (err) {
          error = err;
          expect(server.index).toBe(index);
        }
      }
      expect(error).toBeInstanceOf(ServerError);
      expect((error as ServerError).kind).toBe("storage-full");
      expect((error as Error).message).toMatch(/disk holding the server state is full; nothing was changed/);
      expect(server.jobs.list()).toHaveLength(registered);
      server.close();
      const reopened = Server.open({ dataDir: mount, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12 });
      expect(reopened.jobs.list()).toHaveLength(registered);
      reopened.close();
    } finally {
      Bun.spawnSync(["umount", "-l", mount]);
    }
  });
});
