/**
 * A task that fills the disk holding the agent's state cannot trap its job:
 * the agent says its disk is degraded (health, one WARN), refuses new work,
 * and still stops the job, recording everything; when space returns the
 * reserve comes back and new work is accepted again. The data dir is a small
 * tmpfs, so this needs root.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";
import { capabilities, pidsWithEnv, waitFor } from "../helpers/index.ts";

/** A raw_exec job (root) that fills `dir`, outside its alloc dir so its ephemeral_disk limit does not stop it first. */
const fillJob = (dir: string) => ({
  Job: {
    ID: "fill",
    Name: "fill",
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "g",
        // Small enough to fit the 48 MB disk's fingerprint; the task writes far past it.
        EphemeralDisk: { SizeMB: 8 },
        Tasks: [
          {
            Name: "writer",
            Driver: "raw_exec",
            // 1 MiB files until the disk is full, then a retry every 50 ms that takes whatever frees up.
            Config: { command: "/bin/sh", args: ["-c", 'i=0; while :; do i=$((i+1)); head -c 1048576 /dev/zero > "$FILL_DIR/f$i" || sleep 0.05; done'] },
            Env: { FULL_DISK_TEST: "writer", FILL_DIR: dir },
            Resources: { CPU: 50, MemoryMB: 32 },
            LogConfig: { MaxFiles: 1, MaxFileSizeMB: 1 },
          },
        ],
      },
    ],
  },
});

interface Health {
  disk?: { ok: boolean; message: string };
}

for (const runtime of droverRuntimes()) {
  describe.skipIf(!capabilities.root)(`a full state disk (needs root for a tmpfs; ${runtime.name})`, async () => {
    const agent = await testAgent("drover-full-disk-", {}, {}, runtime);
    mkdirSync(agent.dataDir, { recursive: true });
    const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", agent.dataDir]);
    if (mounted.exitCode !== 0) throw new Error(`mount failed: ${mounted.stderr.toString()}`);
    afterAll(() => void Bun.spawnSync(["umount", "-l", agent.dataDir]));
    await agent.start();
    const health = async () => {
      const res = await fetch(`${agent.address}/v1/agent/health`);
      return { status: res.status, body: (await res.json()) as Health };
    };

    test("the job that filled it still stops; health says so; new work waits for room", async () => {
      expect((await health()).body.disk).toEqual({ ok: true, message: "ok" });
      const fillDir = join(agent.dataDir, "filler");
      mkdirSync(fillDir);
      const FILL_JOB = fillJob(fillDir);
      const registered = await fetch(`${agent.address}/v1/jobs`, { method: "POST", body: JSON.stringify(FILL_JOB) });
      expect(registered.status).toBe(200);
      await waitFor("the writer to run", () => pidsWithEnv("FULL_DISK_TEST", "writer").length > 0);
      await waitFor("health to say the disk is degraded", async () => (await health()).body.disk?.ok === false, { timeoutMs: 30_000 });
      const degraded = await health();
      expect(degraded.status).toBe(500);
      expect(degraded.body.disk?.message).toMatch(/^degraded: the disk holding .* (filled up|is nearly full)/);

      // New work is refused by name; the stop goes through.
      const other = await fetch(`${agent.address}/v1/jobs`, { method: "POST", body: JSON.stringify({ Job: { ...FILL_JOB.Job, ID: "more", Name: "more" } }) });
      expect(other.status).toBe(507);
      const stopped = await fetch(`${agent.address}/v1/job/fill`, { method: "DELETE" });
      expect(stopped.status).toBe(200);
      await waitFor("the writer to be gone", () => pidsWithEnv("FULL_DISK_TEST", "writer").length === 0, { timeoutMs: 30_000 });
      await waitFor("the alloc to be recorded complete", async () => {
        const allocs = await agent.get<{ ClientStatus: string }[]>("/v1/job/fill/allocations");
        return allocs.length === 1 && allocs[0]!.ClientStatus === "complete";
      });

      const log = readdirSync(agent.dir).filter((name) => name.startsWith("agent-")).map((name) => readFileSync(join(agent.dir, name), "utf8")).join("");
      const warnings = log.split("\n").filter((line) => line.includes("the data dir's disk is full or failing"));
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40 });

      // Space comes back: the reserve is restored and new work is accepted.
      rmSync(fillDir, { recursive: true, force: true });
      await waitFor("health ok again", async () => (await health()).status === 200, { timeoutMs: 30_000 });
      const again = await fetch(`${agent.address}/v1/jobs`, { method: "POST", body: JSON.stringify({ Job: { ...FILL_JOB.Job, ID: "small", Name: "small", TaskGroups: [{ ...FILL_JOB.Job.TaskGroups[0]!, Tasks: [{ ...FILL_JOB.Job.TaskGroups[0]!.Tasks[0]!, Config: { command: "/bin/true" } }] }] } }) });
      expect(again.status).toBe(200);
    });
  });
}
