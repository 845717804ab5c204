/**
 * The docker driver's privilege and limit keys (cap_add, cap_drop,
 * privileged, readonly_rootfs, ulimit, sysctl, shm_size, init), secrets/ for
 * a non-root image user, and an image of many layers: each checked as the
 * task sees it, on images from a real registry run by a real executor and
 * nsenter role. Needs root and cgroups, as CI has.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { detectCgroups } from "../../../src/cgroups/detect.ts";
import { DockerDriver, type DockerPluginOptions } from "../../../src/drivers/docker/driver.ts";
import { STATIC_INIT_PATHS } from "../../../src/drivers/docker/security.ts";
import { CAPABILITY_NAMES, capabilityMask, DEFAULT_DOCKER_CAPABILITIES, DEFAULT_EXEC_CAPABILITIES, type CapabilityName } from "../../../src/lib/capabilities.ts";
import { detectIsolation } from "../../../src/nsenter/detect.ts";
import { DockerDriverConfigSchema } from "../../../src/structs/driver-config.ts";
import { killPids, pidsWithCmdline, tempDir, waitFor } from "../../helpers/index.ts";
import { buildImage, missingTools, TestRegistry } from "../../helpers/registry.ts";
import { dockerTaskIn } from "./fixtures.ts";
import { canUseCgroups, testCgroupParent } from "../../executor/fixtures.ts";

const support = await detectIsolation();
const missing = missingTools();
const hasInit = STATIC_INIT_PATHS.some((path) => existsSync(path));
const why = !support.available ? support.reason : !canUseCgroups ? "no cgroups" : missing.length > 0 ? `missing Debian packages ${missing.join(", ")}` : null;
if (why) console.log(`skipping docker security tests: ${why}`);
if (!why && !hasInit) console.log("skipping the docker init test: no static tini (Debian's tini package)");

/** Image layers past what one page of overlayfs options holds in this test's data dir. */
const MANY_LAYERS = 60;
/** A test that starts several containers one after another, on a loaded machine. */
const SEVERAL_TASKS_TIMEOUT_MS = 30_000;
/** Three images built with umoci and pushed with skopeo, one of them of MANY_LAYERS layers. */
const IMAGE_BUILD_TIMEOUT_MS = 60_000;

const dir = tempDir("drover-docker-sec-");
const runDir = join(dir, "run");
mkdirSync(runDir);
const parent = testCgroupParent();
afterAll(() => killPids(pidsWithCmdline(runDir)));
const options = { support, runDir, cgroups: detectCgroups(), mhzPerCore: 2000, imageDir: join(dir, "images") };
const basePlugin: DockerPluginOptions = { insecureRegistries: [], gc: { image: false, imageDelayMs: 0 } };
const driver = new DockerDriver({ ...options, plugin: basePlugin });
let registry: TestRegistry;
let image: string;
let nobodyImage: string;
let tallImage: string;

beforeAll(async () => {
  if (why) return;
  registry = await TestRegistry.start(dir);
  const build = join(dir, "build");
  registry.push(buildImage(build, "plain", { env: ["PATH=/bin"], cmd: ["/bin/sh"], files: { "/tmp/.keep": "" } }), "plain", "test/plain:1");
  registry.push(buildImage(build, "nobody", { env: ["PATH=/bin"], cmd: ["/bin/sh"], user: "65534:65534" }), "nobody", "test/nobody:1");
  registry.push(buildImage(build, "tall", { env: ["PATH=/bin"], cmd: ["/bin/sh"], extraLayers: MANY_LAYERS }), "tall", "test/tall:1");
  image = `${registry.host}/test/plain:1`;
  nobodyImage = `${registry.host}/test/nobody:1`;
  tallImage = `${registry.host}/test/tall:1`;
}, IMAGE_BUILD_TIMEOUT_MS);
afterAll(() => registry?.stop());

function dockerTask(script: string, driverConfig: Record<string, unknown> = {}) {
  return dockerTaskIn(dir, parent, { image, ...driverConfig }, { command: "/bin/sh", args: ["-c", script] });
}

/** Runs `script` to its end and returns its stdout (stderr too, on failure). */
async function output(script: string, driverConfig: Record<string, unknown> = {}, on = driver): Promise<string> {
  const { config, id } = dockerTask(script, driverConfig);
  await on.startTask(config);
  const result = await on.waitTask(id);
  await on.destroyTask(id, true);
  const stdout = readFileSync(config.stdoutPath, "utf8");
  if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}: ${stdout}${readFileSync(config.stderrPath, "utf8")}`);
  return stdout;
}

const capLine = (caps: readonly CapabilityName[]) => `CapEff:\t${capabilityMask(caps).toString(16).padStart(16, "0")}\n`;

describe("docker keys as the job registers them", () => {
  const parse = (config: Record<string, unknown>) => v.safeParse(DockerDriverConfigSchema, { image: "x", ...config });
  const messages = (config: Record<string, unknown>) => parse(config).issues?.map((issue) => `${v.getDotPath(issue)}: ${issue.message}`);

  test("ulimit takes \"n\" or \"soft:hard\" by rlimit name; sysctl only namespaced keys", () => {
    expect(parse({ ulimit: [{ nofile: "1024:2048", nproc: 64 }] }).output).toMatchObject({ ulimit: { nofile: { soft: 1024, hard: 2048 }, nproc: { soft: 64, hard: 64 } } });
    expect(messages({ ulimit: { nofile: "2048:1024" } })).toEqual(['ulimit.nofile: "2048:1024": the soft limit exceeds the hard limit']);
    expect(messages({ ulimit: { files: "1" } })?.[0]).toStartWith("ulimit.files: must name a resource limit");
    expect(parse({ sysctl: { "kernel.shmmax": 1048576, "net.core.somaxconn": "512", "fs.mqueue.msg_max": "20" } }).success).toBe(true);
    expect(messages({ sysctl: { "kernel.panic": "1" } })?.[0]).toStartWith("sysctl.kernel.panic: only namespaced sysctls may be set");
    expect(messages({ sysctl: { "net/../../kernel": "1" } })?.[0]).toStartWith("sysctl.net/../../kernel: only namespaced sysctls");
    expect(messages({ shm_size: 0 })).toEqual(["shm_size: must be at least 1 (bytes)"]);
    expect(messages({ security_opt: ["x"] })?.[0]).toStartWith("security_opt:");
  });
});

describe.skipIf(why !== null)("docker task privileges and limits", () => {
  test("a root task keeps Nomad's default set; allow_caps, cap_add and cap_drop change it as in Nomad; a non-root user keeps none", async () => {
    expect(await output("grep CapEff /proc/self/status")).toBe(capLine(DEFAULT_EXEC_CAPABILITIES));
    const allowing = new DockerDriver({ ...options, plugin: { ...basePlugin, allowCaps: [...DEFAULT_DOCKER_CAPABILITIES, "sys_time"] } });
    // Docker's own default (with net_raw) where allow_caps allows it.
    expect(await output("grep CapEff /proc/self/status", {}, allowing)).toBe(capLine(DEFAULT_DOCKER_CAPABILITIES));
    const changed = [...DEFAULT_DOCKER_CAPABILITIES.filter((cap) => cap !== "chown"), "sys_time" as const];
    expect(await output("grep CapEff /proc/self/status", { cap_add: ["CAP_SYS_TIME"], cap_drop: ["chown"] }, allowing)).toBe(capLine(changed));
    expect(await output("grep CapEff /proc/self/status", { cap_drop: ["all"], cap_add: ["kill"] })).toBe(capLine(["kill"]));
    expect(await output("grep CapEff /proc/self/status", { image: nobodyImage })).toBe(capLine([]));
    const refused = dockerTask("true", { cap_add: ["sys_admin", "net_raw"] });
    await expect(driver.startTask(refused.config)).rejects.toThrow(`config: cap_add: sys_admin, net_raw not allowed on this client (plugin "docker" allow_caps: ${DEFAULT_EXEC_CAPABILITIES.join(", ")})`);
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test("privileged is refused unless allow_privileged; then every capability and no syscall filter", async () => {
    const refused = dockerTask("true", { privileged: true });
    await expect(driver.startTask(refused.config)).rejects.toThrow('config: privileged: Docker privileged mode is disabled on this client (plugin "docker" allow_privileged = false)');
    const allowing = new DockerDriver({ ...options, plugin: { ...basePlugin, allowPrivileged: true } });
    // Every capability this test (the agent) holds: more than the role could give.
    const bounding = BigInt(`0x${/^CapBnd:\s*(\w+)$/m.exec(readFileSync("/proc/self/status", "utf8"))![1]}`);
    const held = CAPABILITY_NAMES.filter((name) => (bounding & capabilityMask([name])) !== 0n);
    expect(await output("grep -E '^(CapEff|Seccomp):' /proc/self/status", { privileged: true }, allowing)).toBe(`${capLine(held)}Seccomp:\t0\n`);
    expect(await output("grep -E '^Seccomp:' /proc/self/status")).toBe("Seccomp:\t2\n");
    // A command exec'd in a privileged task is as unconfined as the task.
    const { config, id } = dockerTask("exec sleep 600", { privileged: true });
    await allowing.startTask(config);
    expect(await allowing.execTask(id, ["grep", "Seccomp:", "/proc/self/status"], 10_000)).toEqual({ stdout: "Seccomp:\t0\n", stderr: "", exitCode: 0 });
    await allowing.stopTask(id, 1_000, "SIGKILL");
    await allowing.destroyTask(id, true);
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test("readonly_rootfs: writes to the image's root fail with EROFS; /alloc, /local, /secrets and /dev/shm stay writable", async () => {
    const script = "for d in / /etc /tmp /alloc/data /local /secrets /dev/shm; do if touch $d/x 2>/dev/null; then echo \"$d rw\"; else touch $d/x 2>&1 | grep -q 'Read-only file system' && echo \"$d ro\"; fi; done";
    expect(await output(script, { readonly_rootfs: true })).toBe("/ ro\n/etc ro\n/tmp ro\n/alloc/data rw\n/local rw\n/secrets rw\n/dev/shm rw\n");
    expect(await output(script)).toBe("/ rw\n/etc rw\n/tmp rw\n/alloc/data rw\n/local rw\n/secrets rw\n/dev/shm rw\n");
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test("ulimit sets the task's soft and hard limits, and those of a command exec'd in it", async () => {
    expect(await output("ulimit -Sn; ulimit -Hn; ulimit -Hc", { ulimit: { nofile: "1024:2048", core: "0" } })).toBe("1024\n2048\n0\n");
    const { config, id } = dockerTask("exec sleep 600", { ulimit: { nofile: "1000:1500" } });
    await driver.startTask(config);
    expect(await driver.execTask(id, ["sh", "-c", "ulimit -Sn; ulimit -Hn"], 10_000)).toEqual({ stdout: "1000\n1500\n", stderr: "", exitCode: 0 });
    await driver.stopTask(id, 1_000, "SIGKILL");
    await driver.destroyTask(id, true);
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test("sysctl sets a namespaced value in the task's own namespace only; a net.* key on the host's network is refused by name", async () => {
    const host = readFileSync("/proc/sys/kernel/shmmni", "utf8");
    expect(await output("cat /proc/sys/kernel/shmmni /proc/sys/fs/mqueue/msg_max", { sysctl: { "kernel.shmmni": "1234", "fs.mqueue.msg_max": "17" } })).toBe("1234\n17\n");
    expect(readFileSync("/proc/sys/kernel/shmmni", "utf8")).toBe(host);
    const refused = dockerTask("true", { sysctl: { "net.core.somaxconn": "512" } });
    await expect(driver.startTask(refused.config)).rejects.toThrow("config: sysctl: net.core.somaxconn needs a network namespace of the task's own");
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test("shm_size sizes /dev/shm (Docker's 64 MiB otherwise)", async () => {
    // df's second column: 1K-blocks.
    expect(await output("df -k /dev/shm | grep -c ' 16384 '", { shm_size: 16 * 1024 * 1024 })).toBe("1\n");
    expect(await output("df -k /dev/shm | grep -c ' 65536 '")).toBe("1\n");
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test.skipIf(!hasInit)("init: tini is PID 1, reaps an orphan that exits, and forwards the stop signal", async () => {
    const { config, id } = dockerTask(
      "echo pid1=$(cat /proc/1/comm) parent=$(grep PPid /proc/$$/status | tr -d '\\t'); (sleep 0.1 & echo $! > /tmp/orphan); o=$(cat /tmp/orphan); i=0; " +
        "while [ -e /proc/$o ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; test -e /proc/$o && echo zombie || echo reaped; " +
        "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.1; done",
      { init: true },
    );
    await driver.startTask(config);
    await waitFor("the trap set", () => readFileSync(config.stdoutPath, "utf8").endsWith("ready\n"));
    expect(readFileSync(config.stdoutPath, "utf8")).toBe("pid1=init parent=PPid:1\nreaped\nready\n");
    await driver.stopTask(id, 10_000, "SIGTERM");
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(config.stdoutPath, "utf8")).toEndWith("ready\ngot-term\n");
    await driver.destroyTask(id, true);
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test("a non-root image user reads its secrets and writes /local and /alloc; secrets/ stays 0700 on the host", async () => {
    const { config, id, taskDir } = dockerTask("id -u; cat /secrets/rendered /secrets/nomad_token; echo ok > /local/out; echo ok > /alloc/data/out; cat /local/out /alloc/data/out", { image: nobodyImage });
    // As the template and identity hooks leave them: root's, 0644 and 0600.
    writeFileSync(join(taskDir.secrets, "rendered"), "from a template\n", { mode: 0o644 });
    writeFileSync(join(taskDir.secrets, "nomad_token"), "a.jwt\n", { mode: 0o600 });
    await driver.startTask(config);
    expect(await driver.waitTask(id)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(config.stdoutPath, "utf8")).toBe("65534\nfrom a template\na.jwt\nok\nok\n");
    const secrets = statSync(taskDir.secrets);
    expect({ mode: (secrets.mode & 0o777).toString(8), uid: secrets.uid }).toEqual({ mode: "700", uid: 65534 });
    await driver.destroyTask(id, true);
  }, SEVERAL_TASKS_TIMEOUT_MS);

  test(`an image of ${MANY_LAYERS} layers runs, every layer in its root`, async () => {
    expect(await output(`cat /layers/1 /layers/${MANY_LAYERS}; ls /layers | grep -c .`, { image: tallImage })).toBe(`1\n${MANY_LAYERS}\n${MANY_LAYERS}\n`);
  }, SEVERAL_TASKS_TIMEOUT_MS);
});
