/**
 * The volumes hook: a task's volume_mount blocks become binds of the node's
 * host volumes, read-only when any of the three places says so; an exec
 * task's go to its driver (bound inside its root), a raw_exec task's are
 * bound by the client at <task dir>/<destination> while the task runs.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { taskDirHook } from "../../../src/client/taskrunner/hooks/task-dir.ts";
import { volumesHook } from "../../../src/client/taskrunner/hooks/volumes.ts";
import { parseJobFile } from "../../../src/jobspec/index.ts";
import { mountsUnder } from "../../../src/lib/procfs.ts";
import { clientEndpoint } from "../../../src/server/client-endpoint.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";
import type { ClientHostVolume } from "../../../src/structs/node.ts";
import { openTestServer, testNode } from "../../server/fixtures.ts";
import { capabilities, tempDir, waitFor } from "../../helpers/index.ts";
import { allocRunner } from "../fixtures.ts";

/** Two host directories offered as volumes "shared" (read-write) and "certs" (read-only). */
function hostVolumes(): Record<string, ClientHostVolume> {
  const dir = tempDir("drover-host-volumes-");
  for (const name of ["shared", "certs"]) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, "hello.txt"), `from ${name}`);
  }
  return {
    shared: { Name: "shared", Path: join(dir, "shared"), ReadOnly: false },
    certs: { Name: "certs", Path: join(dir, "certs"), ReadOnly: true },
  };
}

function volumeJob(driver: string, command: string, mounts: string): string {
  return `job "j" {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type   = "host"
      source = "shared"
    }
    volume "data-ro" {
      type      = "host"
      source    = "shared"
      read_only = true
    }
    volume "certs" {
      type      = "host"
      source    = "certs"
      read_only = true
    }
    task "t" {
      driver = "${driver}"
      config {
        command = "${command}"
      }
      ${mounts}
    }
  }
}`;
}

/** Places `hcl` on a node that offers `volumes`. */
async function place(hcl: string, volumes: Record<string, ClientHostVolume>): Promise<Allocation> {
  const { server } = openTestServer();
  const endpoint = clientEndpoint(server);
  const node = testNode({ HostVolumes: volumes });
  await endpoint.registerNode(node);
  server.jobs.register(await parseJobFile("job.hcl", hcl), {});
  const [alloc] = (await endpoint.watchAllocs(node.ID, 0)).allocs;
  return structuredClone(alloc!);
}

const MOUNTS = `
      volume_mount {
        volume      = "data"
        destination = "/srv/data"
      }
      volume_mount {
        volume      = "data-ro"
        destination = "local/ro"
      }
      volume_mount {
        volume      = "certs"
        destination = "/etc/ssl/extra"
      }
      volume_mount {
        volume      = "data"
        destination = "/srv/mount-ro"
        read_only   = true
      }`;

const hooks = (volumes: Record<string, ClientHostVolume>, canMount = true) => () => [taskDirHook({ secretsTmpfs: false }), volumesHook({ hostVolumes: volumes, canMount })];

test("an exec task's volume mounts go to its driver, read-only where the host volume, the group or the mount says so", async () => {
  const volumes = hostVolumes();
  const alloc = await place(volumeJob("exec", "run", MOUNTS), volumes);
  const { runner, driver } = allocRunner(alloc, { taskHooks: hooks(volumes) });
  void runner.run();
  await waitFor("the task started", () => driver.tasks.size === 1);
  const config = [...driver.tasks.values()][0]!.config;
  expect(config.volumes).toEqual([
    { hostPath: volumes.shared!.Path, taskPath: "/srv/data", readOnly: false },
    { hostPath: volumes.shared!.Path, taskPath: "/local/ro", readOnly: true },
    { hostPath: volumes.certs!.Path, taskPath: "/etc/ssl/extra", readOnly: true },
    { hostPath: volumes.shared!.Path, taskPath: "/srv/mount-ro", readOnly: true },
  ]);
  // Nothing is bound on the host for an isolated task: its driver binds them in the task's own namespace.
  expect(mountsUnder(runner.allocDir.path)).toEqual([]);
  await runner.destroy();
});

describe.skipIf(!capabilities.root)(`a raw_exec task's host volumes${capabilities.root ? "" : " (skipped: needs root to mount)"}`, () => {
  test("are bound in its task dir while it runs, read-only where asked, and detached when it ends", async () => {
    const volumes = hostVolumes();
    const alloc = await place(volumeJob("raw_exec", "run", MOUNTS), volumes);
    const { runner, driver } = allocRunner(alloc, { taskHooks: hooks(volumes) });
    void runner.run();
    await waitFor("the task started", () => driver.tasks.size === 1);
    const taskDir = runner.allocDir.taskDir("t").root;
    expect(readFileSync(join(taskDir, "srv/data/hello.txt"), "utf8")).toBe("from shared");
    expect(readFileSync(join(taskDir, "etc/ssl/extra/hello.txt"), "utf8")).toBe("from certs");
    writeFileSync(join(taskDir, "srv/data/by-task.txt"), "written");
    expect(readFileSync(join(volumes.shared!.Path, "by-task.txt"), "utf8")).toBe("written");
    for (const readOnly of ["local/ro", "etc/ssl/extra", "srv/mount-ro"]) {
      expect(() => writeFileSync(join(taskDir, readOnly, "x"), "x")).toThrow("EROFS");
    }
    expect(mountsUnder(taskDir)).toHaveLength(4);

    driver.finish(alloc.ID, "t", 0);
    await waitFor("the task dead", () => runner.taskStates().t?.State === "dead");
    expect(mountsUnder(taskDir)).toEqual([]);
    // The host volume keeps what the task wrote; the task dir keeps only empty mount points.
    expect(readdirSync(join(taskDir, "srv/data"))).toEqual([]);
    expect(readFileSync(join(volumes.shared!.Path, "by-task.txt"), "utf8")).toBe("written");
    await runner.destroy();
  });

  test("a symlink planted where a destination goes fails the start, and nothing is bound where it points", async () => {
    const volumes = hostVolumes();
    const alloc = await place(volumeJob("raw_exec", "run", 'volume_mount {\n volume = "data"\n destination = "local/data"\n }'), volumes);
    const elsewhere = tempDir("drover-volume-elsewhere-");
    const { runner, driver } = allocRunner(alloc, {
      taskHooks: () => [
        taskDirHook({ secretsTmpfs: false }),
        // Stands for what a previous run of the task left in its local/.
        { name: "plant", prestart: async (req) => void symlinkSync(elsewhere, join(req.taskDir.local, "data")) },
        volumesHook({ hostVolumes: volumes, canMount: true }),
      ],
    });
    await runner.run();
    expect(driver.tasks.size).toBe(0);
    const errors = runner.taskStates().t!.Events.map((event) => event.SetupError ?? "");
    expect(errors).toContain("volumes: host volume at /local/data: local/data is not a directory (a symlink or a file is in its place)");
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(mountsUnder(runner.allocDir.path)).toEqual([]);
    await runner.destroy();
  });
});

test("a host volume this node lacks fails the task for good, naming it", async () => {
  const volumes = hostVolumes();
  const alloc = await place(volumeJob("raw_exec", "run", 'volume_mount {\n volume = "data"\n destination = "data"\n }'), volumes);
  // The node lost "shared" since placement (the agent restarted with another config).
  const { runner, driver } = allocRunner(alloc, { taskHooks: hooks({ certs: volumes.certs! }) });
  await runner.run();
  expect(driver.tasks.size).toBe(0);
  const failure = runner.taskStates().t!.Events.find((event) => event.SetupError);
  expect(failure).toMatchObject({ Type: "Setup Failure", SetupError: 'volumes: host volume validation error: missing "shared"', FailsTask: true });
});

test("a raw_exec task's volumes need an agent that can mount; an exec task's do not", async () => {
  const volumes = hostVolumes();
  const mounts = 'volume_mount {\n volume = "data"\n destination = "data"\n }';
  const raw = allocRunner(await place(volumeJob("raw_exec", "run", mounts), volumes), { taskHooks: hooks(volumes, false) });
  await raw.runner.run();
  expect(raw.runner.taskStates().t!.Events.map((event) => event.SetupError ?? "")).toContain("volumes: binding host volumes into a raw_exec task's directory needs the agent to run as root");

  const exec = allocRunner(await place(volumeJob("exec", "exit:0", mounts), volumes), { taskHooks: hooks(volumes, false) });
  await exec.runner.run();
  expect(exec.driver.calls).toEqual(["start t"]);
});
