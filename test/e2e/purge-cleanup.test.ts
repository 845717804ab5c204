/**
 * A purged job leaves nothing on the client: once its allocs finish, the
 * server forgets them and the client destroys them as Nomad's client does,
 * so their executors, `secrets/` tmpfs mounts, host volume binds and alloc dirs go, and after
 * the agent stops, `rm -rf` of the data dir just works.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { testAgent } from "../helpers/agent.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";
import { hardDiskLimit } from "../helpers/disk-images.ts";
import { capabilities, pidsWithCmdline, pidsWithEnv, tempDir, waitFor } from "../helpers/index.ts";

/** The alloc images kept beside the alloc root (client/allocdir/disk-image.ts). */
function images(allocDir: string): string[] {
  return existsSync(`${allocDir}.disks`) ? readdirSync(`${allocDir}.disks`) : [];
}

for (const runtime of droverRuntimes()) {
  describe(`job stop -purge (${runtime.name})`, async () => {
    // A host volume each task gets in its dir: purging must unbind it, never delete through it.
    const volume = tempDir("drover-purge-volume-");
    writeFileSync(join(volume, "keep.txt"), "kept");
    const agent = await testAgent("drover-purge-", { client: { host_volume: { shared: { path: volume, read_only: true } } } }, {}, runtime);
    await agent.start();

    test("tasks, executors, secrets mounts and alloc dirs go; the data dir can then be removed", async () => {
      const path = join(agent.dir, "purged.hcl");
      writeFileSync(
        path,
        'job "purged" {\n  group "g" {\n    count = 2\n    volume "data" {\n      type = "host"\n      source = "shared"\n      read_only = true\n    }\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/sleep"\n        args = ["600"]\n      }\n      volume_mount {\n        volume = "data"\n        destination = "local/data"\n      }\n    }\n  }\n}\n',
      );
      expect((await agent.cli("job", "run", path)).code).toBe(0);
      const allocDir = join(agent.dataDir, "alloc");
      expect(readdirSync(allocDir)).toHaveLength(2);
      // Each task's secrets tmpfs and host volume (and each alloc dir's own file system where the host
      // allows), below the alloc root's own nosuid bind.
      if (capabilities.root) expect(mountsUnder(allocDir).filter((point) => point !== allocDir)).toHaveLength(hardDiskLimit ? 6 : 4);

      const stop = await agent.cli("job", "stop", "-purge", "purged");
      expect(stop.code).toBe(0);
      // The images go just after their alloc dirs.
      await waitFor("the purged allocs' dirs and images to go", () => readdirSync(allocDir).length === 0 && images(allocDir).length === 0);
      expect(mountsUnder(agent.dataDir)).toEqual(capabilities.root ? [allocDir] : []);
      await agent.executorsGone();
      expect(await agent.get<unknown[]>("/v1/allocations")).toEqual([]);

      agent.process.kill("SIGTERM");
      expect(await agent.process.exited).toEqual({ exitCode: 0, signal: 0 });
      // The log pump outlives the agent by design; the host reaper leaves once its agent is gone and no
      // executor is left; what is left under the data dir is only files.
      await waitFor("no process under the run dir", () => pidsWithCmdline(join(agent.dataDir, "run")).filter((pid) => pid !== agent.process.pid).length === 0);
      // The agent undid the alloc root's bind with the last alloc dir gone.
      expect(mountsUnder(agent.dataDir)).toEqual([]);
      rmSync(agent.dataDir, { recursive: true });
      expect(existsSync(agent.dataDir)).toBe(false);
      expect(readFileSync(join(volume, "keep.txt"), "utf8")).toBe("kept");
    }, 60_000);
  });
}

describe("a SIGTERM just after a purge", async () => {
  const agent = await testAgent("drover-purge-sigterm-");
  await agent.start();

  test("leaves no alloc dir and no secrets mount behind", async () => {
    const path = join(agent.dir, "purged-then-stopped.hcl");
    writeFileSync(path, 'job "purged-then-stopped" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/sleep"\n        args = ["600"]\n      }\n    }\n  }\n}\n');
    expect((await agent.cli("job", "run", path)).code).toBe(0);
    const allocDir = join(agent.dataDir, "alloc");
    expect(readdirSync(allocDir)).toHaveLength(1);

    const purge = await fetch(`${agent.address}/v1/job/purged-then-stopped?purge=true`, { method: "DELETE" });
    expect(purge.status).toBe(200);
    agent.process.kill("SIGTERM");
    expect(await agent.process.exited).toEqual({ exitCode: 0, signal: 0 });
    expect(readdirSync(allocDir)).toEqual([]);
    expect(mountsUnder(agent.dataDir)).toEqual([]);
    expect(images(allocDir)).toEqual([]);
    expect(pidsWithEnv("NOMAD_JOB_NAME", "purged-then-stopped")).toEqual([]);
  }, 60_000);
});
