/**
 * The docker driver below the task runner: images from a real registry
 * (Debian's docker-registry on 127.0.0.1, images built with umoci from
 * busybox-static, pushed with skopeo), run by a real executor and nsenter
 * role on an overlay of the image's layers. Needs root and cgroups, as CI has.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { detectCgroups } from "../../../src/cgroups/detect.ts";
import { DockerDriver } from "../../../src/drivers/docker/driver.ts";
import type { TaskConfig } from "../../../src/drivers/driver.ts";
import { mountsUnder } from "../../../src/lib/procfs.ts";
import { detectIsolation } from "../../../src/nsenter/detect.ts";
import { killPids, pidsWithCmdline, tempDir, waitFor } from "../../helpers/index.ts";
import { buildImage, missingTools, TestRegistry } from "../../helpers/registry.ts";
import { dockerTaskIn } from "./fixtures.ts";
import { canUseCgroups, testCgroupParent } from "../../executor/fixtures.ts";

const support = await detectIsolation();
const missing = missingTools();
const why = !support.available ? support.reason : !canUseCgroups ? "no cgroups" : missing.length > 0 ? `missing Debian packages ${missing.join(", ")}` : null;
if (why) console.log(`skipping docker driver tests: ${why}`);

const dir = tempDir("drover-docker-");
const runDir = join(dir, "run");
mkdirSync(runDir);
const parent = testCgroupParent();
afterAll(() => killPids(pidsWithCmdline(runDir)));
const IMAGE_DELAY_MS = 60_000;
const options = { support, runDir, cgroups: detectCgroups(), mhzPerCore: 2000, imageDir: join(dir, "images") };
const driver = new DockerDriver({ ...options, plugin: { insecureRegistries: [], gc: { image: true, imageDelayMs: IMAGE_DELAY_MS } } });
let registry: TestRegistry;
let image: string;

beforeAll(async () => {
  if (why) return;
  registry = await TestRegistry.start(dir);
  const layout = buildImage(join(dir, "build"), "app", {
    files: { "/etc/greeting": "hello from the image\n", "/etc/doomed": "gone\n", "/srv/data": "data\n" },
    env: ["GREETING=image", "FROM_IMAGE=yes", "PATH=/bin"],
    cmd: ["/bin/sh", "-c", "cat /etc/greeting; echo greeting=$GREETING from_image=$FROM_IMAGE; pwd; id -u; test -e /etc/doomed || echo doomed-gone"],
    workdir: "/srv",
    remove: ["/etc/doomed"],
  });
  registry.push(layout, "app", "test/app:1");
  image = `${registry.host}/test/app:1`;
});
afterAll(() => registry?.stop());

function dockerTask(driverConfig: Record<string, unknown>, overrides: Partial<TaskConfig> = {}) {
  return dockerTaskIn(dir, parent, { image, ...driverConfig }, { env: { GREETING: "task", NOMAD_TASK_DIR: "/local" }, ...overrides });
}

describe.skipIf(why !== null)("docker driver", () => {
  test("fingerprints as driver.docker", () => {
    expect(driver.fingerprint()).toMatchObject({ detected: true, healthy: true, attributes: { "driver.docker": "1" } });
  });

  test("runs the image's Cmd in its WorkingDir as root, with its Env under the task's, on its files with the whiteout honoured", async () => {
    const { config, id } = dockerTask({});
    await driver.startTask(config);
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(config.stdoutPath, "utf8")).toBe("hello from the image\ngreeting=task from_image=yes\n/srv\n0\ndoomed-gone\n");
    await driver.destroyTask(id, true);
  });

  test("command, args, entrypoint, work_dir and user override the image's as Docker does", async () => {
    const { config, id } = dockerTask({ entrypoint: ["/bin/sh", "-c"], work_dir: "/etc" }, { command: "echo $0 $(pwd) $(id -u):$(id -g)", args: ["first"], user: "1000:50" });
    await driver.startTask(config);
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(config.stdoutPath, "utf8")).toBe("first /etc 1000:50\n");
    await driver.destroyTask(id, true);
  });

  test("two tasks share one copy of each layer; writes land in each task's own upper dir; the overlay is gone after stop", async () => {
    const a = dockerTask({}, { command: "/bin/sh", args: ["-c", "echo mine > /srv/data; echo $$ > /alloc/ready; exec sleep 600"] });
    const b = dockerTask({}, { command: "/bin/sh", args: ["-c", "cat /srv/data; exec sleep 600"] });
    const [{ handle: ha }, { handle: hb }] = await Promise.all([driver.startTask(a.config), driver.startTask(b.config)]);
    const stored = driver.store.findImage(image)!;
    expect(readdirSync(join(dir, "images/layers")).filter((name) => !name.startsWith(".")).sort()).toEqual(stored.layers.map((layer) => layer.slice(7)).sort());
    await waitFor("task a wrote", () => existsSync(join(a.allocDir.shared, "ready")));
    await waitFor("task b printed", () => readFileSync(b.config.stdoutPath, "utf8") === "data\n");
    expect(readFileSync(join(a.taskDir.root, ".rootfs/upper/srv/data"), "utf8")).toBe("mine\n");
    const mountinfo = readFileSync(`/proc/${ha.task.pid}/mountinfo`, "utf8");
    expect(mountinfo).toContain(` - overlay overlay `);
    expect(mountinfo).toContain(`upperdir=${join(a.taskDir.root, ".rootfs/upper")}`);
    // Nothing on the host: the overlay lives in the task's mount namespace.
    expect(mountsUnder(a.taskDir.root)).toEqual([a.taskDir.secrets]);
    for (const { id } of [a, b]) {
      await driver.stopTask(id, 1_000, "SIGTERM");
      await driver.destroyTask(id, true);
    }
    expect(existsSync(`/proc/${ha.task.pid}`) || existsSync(`/proc/${hb.task.pid}`)).toBe(false);
    expect(mountsUnder(a.taskDir.root)).toEqual([a.taskDir.secrets]);
  });

  test("the image's StopSignal stops the task when the job names no kill_signal", async () => {
    const layout = buildImage(join(dir, "build"), "stoppable", { cmd: ["/bin/sh", "-c", "trap 'echo got-usr1; exit 0' USR1; echo ready; while true; do sleep 0.1; done"] });
    const configured = spawnSync("umoci", ["config", "--image", `${layout}:stoppable`, "--config.stopsignal=SIGUSR1"], { encoding: "utf8" });
    expect(configured.stderr).toBe("");
    registry.push(layout, "stoppable", "test/stoppable:1");
    const { config, id } = dockerTask({ image: `${registry.host}/test/stoppable:1` });
    const { handle } = await driver.startTask(config);
    expect(handle.killSignal).toBe("SIGUSR1");
    await waitFor("the trap set", () => readFileSync(config.stdoutPath, "utf8") === "ready\n");
    await driver.stopTask(id, 10_000);
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(config.stdoutPath, "utf8")).toBe("ready\ngot-usr1\n");
    await driver.destroyTask(id, true);
    const named = dockerTask({ image: `${registry.host}/test/stoppable:1` }, { killSignal: "SIGTERM" });
    expect((await driver.startTask(named.config)).handle.killSignal).toBe("SIGTERM");
    await driver.stopTask(named.id, 1_000);
    await driver.destroyTask(named.id, true);
  });

  test("exec runs inside the container", async () => {
    const { config, id } = dockerTask({}, { command: "sleep", args: ["600"] });
    await driver.startTask(config);
    expect(await driver.execTask(id, ["cat", "/etc/greeting"], 10_000)).toEqual({ stdout: "hello from the image\n", stderr: "", exitCode: 0 });
    // As `docker exec`: the image's user, env and working dir.
    expect(await driver.execTask(id, ["sh", "-c", "echo $(pwd) $(id -u) $FROM_IMAGE"], 10_000)).toEqual({ stdout: "/srv 0 yes\n", stderr: "", exitCode: 0 });
    await driver.stopTask(id, 1_000, "SIGTERM");
    await driver.destroyTask(id, true);
  });

  test("volumes within the alloc dir are bound; one outside it is refused by name", async () => {
    const { config, id, allocDir } = dockerTask({ volumes: ["../alloc/data:/shared:ro"] }, { command: "/bin/sh", args: ["-c", "cat /shared/note; touch /shared/x 2>/dev/null || echo read-only"] });
    await Bun.write(join(allocDir.shared, "data/note"), "shared note\n");
    await driver.startTask(config);
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(config.stdoutPath, "utf8")).toBe("shared note\nread-only\n");
    await driver.destroyTask(id, true);
    const outside = dockerTask({ volumes: ["/etc:/host-etc"] });
    await expect(driver.startTask(outside.config)).rejects.toThrow('config: volumes: "/etc" is outside the alloc dir');
    const planted = dockerTask({ volumes: ["../alloc/data/escape:/host"] });
    symlinkSync("/", join(planted.allocDir.shared, "data/escape"));
    await expect(driver.startTask(planted.config)).rejects.toThrow('config: volumes: "../alloc/data/escape" passes a symlink');
  });

  test("load: an image from a docker save tarball in local/", async () => {
    const archive = join(dir, "saved.tar");
    const pushed = spawnSync("skopeo", ["copy", "--quiet", `oci:${join(dir, "build/oci")}:app`, `docker-archive:${archive}:example.com/saved:2`], { encoding: "utf8" });
    expect(pushed.stderr).toBe("");
    const { config, id, taskDir } = dockerTask({ image: "example.com/saved:2", load: "saved.tar" }, { command: "cat", args: ["/etc/greeting"] });
    spawnSync("cp", [archive, join(taskDir.local, "saved.tar")]);
    await driver.startTask(config);
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(config.stdoutPath, "utf8")).toBe("hello from the image\n");
    expect(driver.store.findImage("example.com/saved:2")).not.toBeNull();
    await driver.destroyTask(id, true);
  });

  test("image gc removes an image image_delay after its last task, and its layers with it; an image in use stays", async () => {
    const { config, id } = dockerTask({}, { command: "sleep", args: ["600"] });
    await driver.startTask(config);
    const removed = driver.collectImages(Date.now() + IMAGE_DELAY_MS);
    expect(removed.sort()).toEqual(["example.com/saved:2", `${registry.host}/test/stoppable:1`].sort());
    expect(driver.store.listImages().map((each) => each.name)).toEqual([image]);
    await driver.stopTask(id, 1_000, "SIGKILL");
    await driver.destroyTask(id, true);
    expect(driver.collectImages(Date.now() + IMAGE_DELAY_MS)).toEqual([image]);
    expect(readdirSync(join(dir, "images/layers")).filter((name) => !name.startsWith("."))).toEqual([]);
  });

  test("a task found again by a new driver (an agent restart) keeps its image from gc; once destroyed, it goes", async () => {
    const { config, id } = dockerTask({}, { command: "sleep", args: ["600"] });
    const { handle } = await driver.startTask(config);
    const restarted = new DockerDriver({ ...options, plugin: { insecureRegistries: [], gc: { image: false, imageDelayMs: 0 } } });
    await restarted.recoverTask(handle);
    expect(restarted.collectImages(Date.now() + IMAGE_DELAY_MS)).not.toContain(image);
    expect(restarted.store.findImage(image)).not.toBeNull();
    expect(await restarted.execTask(id, ["cat", "/etc/greeting"], 10_000)).toMatchObject({ stdout: "hello from the image\n", exitCode: 0 });
    await restarted.stopTask(id, 1_000, "SIGKILL");
    await restarted.destroyTask(id, true);
    driver.detachAll();
    expect(restarted.collectImages(Date.now() + IMAGE_DELAY_MS)).toContain(image);
  });
});
