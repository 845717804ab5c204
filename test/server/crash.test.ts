import { describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DiskReserve } from "../../src/state/reserve.ts";
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
  test.skipIf(!capabilities.root)("with the disk reserve, a job stop is recorded on a disk that new work filled (needs root for a tmpfs)", async () => {
    const mount = join(tempDir("drover-full-"), "fs");
    mkdirSync(mount);
    const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount]);
    if (mounted.exitCode !== 0) throw new Error(`mount failed: ${mounted.stderr.toString()}`);
    try {
      const reserve = new DiskReserve(mount, 256 * 1024, 4);
      expect(reserve.ensure()).toBe(true);
      const server = Server.open({ dataDir: mount, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12, reserve });
      server.nodes.upsert(testNode());
      const padding = "x".repeat(16 * 1024);
      // Registrations fill the disk; the one SQLite refuses spends the reserve, and later ones are refused up front.
      let refused: ServerError | undefined;
      for (let i = 0; i < 400 && !refused; i++) {
        try {
          server.jobs.register(testJob(`fill-${i}`, { meta: { padding } }));
        } catch (err) {
          refused = err as ServerError;
        }
      }
      expect(reserve.held).toBe(false);
      expect(refused?.kind).toBe("storage-full");
      expect(refused?.message).toMatch(/filled up and the agent is using its \d+ MB reserve to stop work; nothing was changed/);
      // Something else fills what is left: the disk is full.
      let filled = 0;
      expect(() => {
        for (;;) writeFileSync(join(mount, `more-${filled++}`), padding);
      }).toThrow(/ENOSPC|no space/i);
      // Stops still land, and persist.
      const jobs = server.jobs.list().map((job) => job.ID);
      for (const id of jobs.slice(0, 3)) server.jobs.deregister(id, false);
      expect(server.jobs.list().filter((job) => job.Stop)).toHaveLength(3);
      server.close();
      const reopened = Server.open({ dataDir: mount, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12 });
      expect(reopened.jobs.list().filter((job) => job.Stop)).toHaveLength(3);
      reopened.close();
    } finally {
      Bun.spawnSync(["umount", "-l", mount]);
    }
  });
});
