/**
 * The exec driver end to end below the task runner: a real executor starts
 * `drover nsenter`, which isolates the task in its own namespaces, chroot and
 * cgroup. Needs root and cgroups, as CI has.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { cgroupDirs } from "../../src/cgroups/paths.ts";
import { AllocDir } from "../../src/client/allocdir/alloc-dir.ts";
import { DEFAULT_CHROOT_ENV } from "../../src/nsenter/spec.ts";
import { ExecDriver } from "../../src/drivers/exec.ts";
import type { TaskConfig } from "../../src/drivers/driver.ts";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { DEFAULT_EXEC_CAPABILITIES } from "../../src/lib/capabilities.ts";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import { capabilities, executorsUnder, isRunning, killPids, pidsWithCmdline, tempDir, waitFor } from "../helpers/index.ts";
import { canUseCgroups, testCgroupParent } from "../executor/fixtures.ts";

const support = await detectIsolation();
const skip = !support.available || !canUseCgroups;
if (skip) console.log(`skipping exec driver tests: ${support.available ? "no cgroups" : support.reason}`);

const dir = tempDir("drover-exec-");
const runDir = join(dir, "run");
mkdirSync(runDir);
const parent = testCgroupParent();
// Executors a failed test did not destroy; their tasks die with the cgroup parent above.
afterAll(() => killPids(pidsWithCmdline(runDir)));
const options = { support, runDir, cgroups: detectCgroups(), mhzPerCore: 2000, chrootEnv: DEFAULT_CHROOT_ENV };
const hasPython = existsSync("/usr/bin/python3");
if (!hasPython) console.log("skipping the exec driver's fork bomb and syscall_add tests: no /usr/bin/python3");
/** client.pids_limit for these tests; small, so that a fork bomb meets it quickly. */
const CLIENT_PIDS_LIMIT = 64;
const driver = new ExecDriver({ ...options, capabilities: DEFAULT_EXEC_CAPABILITIES, pidsLimit: CLIENT_PIDS_LIMIT, allowSyscalls: ["keyctl"] });

function isolatedTask(script: string, overrides: Partial<TaskConfig> = {}): { config: TaskConfig; id: string; allocDir: AllocDir } {
  const allocDir = new AllocDir(join(dir, "allocs"), randomUUID());
  allocDir.build();
  const taskDir = allocDir.buildTask("probe", { secretsTmpfs: true, owner: { uid: 65534, gid: 65534 } });
  const config: TaskConfig = {
    allocId: allocDir.allocId,
    taskName: "probe",
    command: "/bin/sh",
    args: ["-c", script],
    env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", NOMAD_TASK_DIR: "/local" },
    cwd: taskDir.root,
    allocDir: allocDir.shared,
    stdoutPath: join(allocDir.logs, "probe.out"),
    stderrPath: join(allocDir.logs, "probe.err"),
    resources: { cpuMhz: 100, memoryMb: 64 },
    cgroupParent: parent,
    ...overrides,
  };
  return { config, id: `${config.allocId}/probe`, allocDir };
}

describe("exec driver, before any isolation", () => {
  test("a task config it cannot isolate is refused before an executor starts", async () => {
    const healthy = new ExecDriver({ ...options, support: { available: true }, capabilities: [] });
    const config: TaskConfig = {
      allocId: randomUUID(),
      taskName: "probe",
      command: "/bin/true",
      env: {},
      cwd: dir,
      stdoutPath: join(dir, "refused.out"),
      stderrPath: join(dir, "refused.err"),
      resources: { cpuMhz: 100, memoryMb: 64 },
      cgroupParent: parent,
    };
    await expect(healthy.startTask(config)).rejects.toThrow("allocDir");
    expect(executorsUnder(runDir)).toEqual([]);
  });

  test("config keys it does not know, a pids_limit above the client's and a syscall the operator did not allow are refused by name", async () => {
    const healthy = new ExecDriver({ ...options, support: { available: true }, capabilities: [], pidsLimit: CLIENT_PIDS_LIMIT, allowSyscalls: ["keyctl"] });
    const config = (driverConfig: Record<string, unknown>): TaskConfig => ({
      allocId: randomUUID(),
      taskName: "probe",
      command: "/bin/true",
      env: {},
      cwd: dir,
      allocDir: dir,
      stdoutPath: join(dir, "refused.out"),
      stderrPath: join(dir, "refused.err"),
      resources: { cpuMhz: 100, memoryMb: 64 },
      cgroupParent: parent,
      driverConfig,
    });
    await expect(healthy.startTask(config({ pid_limit: 5 }))).rejects.toThrow('config: unknown key "pid_limit"');
    await expect(healthy.startTask(config({ pids_limit: 65 }))).rejects.toThrow("config: pids_limit: 65 is above this client's pids_limit (64)");
    await expect(healthy.startTask(config({ pids_limit: 0 }))).rejects.toThrow("config: pids_limit: must be at least 1");
    await expect(healthy.startTask(config({ syscall_add: ["keyctl", "mount", "bpf"] }))).rejects.toThrow(
      'config: syscall_add: mount, bpf not allowed on this client (plugin "exec" allow_syscalls: keyctl)',
    );
    await expect(healthy.startTask(config({ syscall_add: ["ptrace"] }))).rejects.toThrow("config: syscall_add.0: must name a call the default syscall filter refuses");
    await expect(healthy.startTask(config({ pid_mode: "shared" }))).rejects.toThrow('config: pid_mode: must be "private" or "host"');
    await expect(healthy.startTask(config({ cap_add: ["sys_everything"] }))).rejects.toThrow('config: cap_add.0: must name a Linux capability or "all"');
    const narrow = new ExecDriver({ ...options, support: { available: true }, capabilities: ["chown"], allowCaps: ["chown", "net_raw"] });
    await expect(narrow.startTask(config({ cap_add: ["CAP_NET_RAW", "sys_admin", "sys_ptrace"] }))).rejects.toThrow(
      'config: cap_add: sys_admin, sys_ptrace not allowed on this client (plugin "exec" allow_caps: chown, net_raw)',
    );
    expect(executorsUnder(runDir)).toEqual([]);
  });
});

describe.skipIf(skip)("exec driver", () => {
  test("fingerprints healthy here; an unsupported host is unhealthy with the reason", () => {
    expect(driver.fingerprint()).toMatchObject({ detected: true, healthy: true, attributes: { "driver.exec": "1" } });
    const without = new ExecDriver({ ...options, support: { available: false, reason: "needs root" }, capabilities: [] });
    expect(without.fingerprint()).toEqual({ detected: true, healthy: false, description: "needs root", attributes: {} });
  });

  test("the task is isolated: PID 1 of its namespace, its own hostname, nobody, no host /root, read-only /usr", async () => {
    const { config, id } = isolatedTask(
      'echo "pid1=$(tr "\\0" " " < /proc/1/cmdline)"; echo "host=$(hostname)"; echo "uid=$(id -u)"; ' +
        'echo "procs=$(ls /proc | grep -c "^[0-9]")"; echo "root=$(test -e /root/. && echo seen || echo hidden)"; ' +
        'echo "usr=$(touch /usr/drover-x 2>/dev/null && echo writable || echo read-only)"',
    );
    await driver.startTask(config);
    const result = await driver.waitTask(id);
    expect(result).toMatchObject({ exitCode: 0, oomKilled: false });
    const out = readFileSync(config.stdoutPath, "utf8");
    expect(out).toContain("pid1=/bin/sh -c");
    expect(out).toContain(`host=${config.allocId.slice(0, 8)}`);
    expect(out).toContain("uid=65534");
    // The shell, its command substitution's subshell, ls and grep: the host's hundreds are invisible.
    expect(Number(/procs=(\d+)/.exec(out)?.[1])).toBeLessThanOrEqual(5);
    expect(out).toContain("\nroot=hidden\n");
    expect(out).toContain("\nusr=read-only\n");
    await driver.destroyTask(id, true);
  });

  test("allow_caps narrows what a root task keeps", async () => {
    const narrow = new ExecDriver({ ...options, capabilities: ["chown", "kill"] });
    const { config, id } = isolatedTask("grep CapEff /proc/self/status", { user: "root" });
    await narrow.startTask(config);
    expect(await narrow.waitTask(id)).toMatchObject({ exitCode: 0 });
    // chown is capability 0, kill is 5.
    expect(readFileSync(config.stdoutPath, "utf8")).toBe(`CapEff:\t${(0x21).toString(16).padStart(16, "0")}\n`);
    await narrow.destroyTask(id, true);
  });

  test("cap_add and cap_drop change what a root task keeps, within allow_caps", async () => {
    const allowing = new ExecDriver({ ...options, capabilities: ["chown", "kill"], allowCaps: ["chown", "kill", "net_raw"] });
    const { config, id } = isolatedTask("grep -E 'Cap(Eff|Bnd)' /proc/self/status", { user: "root", driverConfig: { cap_add: ["CAP_NET_RAW"], cap_drop: ["kill"] } });
    await allowing.startTask(config);
    expect(await allowing.waitTask(id)).toMatchObject({ exitCode: 0 });
    // chown is capability 0, net_raw 13; kill (5) is gone from the effective and the bounding set.
    const mask = ((1 << 0) | (1 << 13)).toString(16).padStart(16, "0");
    expect(readFileSync(config.stdoutPath, "utf8")).toBe(`CapEff:\t${mask}\nCapBnd:\t${mask}\n`);
    await allowing.destroyTask(id, true);
  });

  test('pid_mode and ipc_mode "host" share the host\'s PID and IPC namespaces; the default keeps its own', async () => {
    const script = 'echo "pid=$(readlink /proc/self/ns/pid)"; echo "ipc=$(readlink /proc/self/ns/ipc)"; echo "procs=$(ls /proc | grep -c "^[0-9]")"; echo "init=$(tr "\\0" " " < /proc/1/cmdline)"';
    const host = { pid: readlinkSync("/proc/self/ns/pid"), ipc: readlinkSync("/proc/self/ns/ipc") };
    const shared = isolatedTask(script, { driverConfig: { pid_mode: "host", ipc_mode: "host" } });
    await driver.startTask(shared.config);
    expect(await driver.waitTask(shared.id)).toMatchObject({ exitCode: 0 });
    const sharedOut = readFileSync(shared.config.stdoutPath, "utf8");
    expect(sharedOut).toContain(`pid=${host.pid}\n`);
    expect(sharedOut).toContain(`ipc=${host.ipc}\n`);
    // The host's processes: its init and more than the task's handful.
    expect(sharedOut).not.toContain("init=/bin/sh -c");
    expect(Number(/procs=(\d+)/.exec(sharedOut)?.[1])).toBeGreaterThan(5);
    await driver.destroyTask(shared.id, true);

    const own = isolatedTask(script);
    await driver.startTask(own.config);
    expect(await driver.waitTask(own.id)).toMatchObject({ exitCode: 0 });
    const ownOut = readFileSync(own.config.stdoutPath, "utf8");
    expect(ownOut).not.toContain(`pid=${host.pid}\n`);
    expect(ownOut).not.toContain(`ipc=${host.ipc}\n`);
    expect(ownOut).toContain("init=/bin/sh -c");
    await driver.destroyTask(own.id, true);
  });

  test('exec reaches a pid_mode "host" task, in the task\'s mount namespace', async () => {
    const { config, id } = isolatedTask("", { command: "sleep", args: ["600"], driverConfig: { pid_mode: "host" } });
    const { handle } = await driver.startTask(config);
    expect(readlinkSync(`/proc/${handle.task.pid}/ns/pid`)).toBe(readlinkSync("/proc/self/ns/pid"));
    const hostname = await driver.execTask(id, ["hostname"], 10_000);
    expect(hostname).toEqual({ stdout: `${config.allocId.slice(0, 8)}\n`, stderr: "", exitCode: 0 });
    await driver.stopTask(id, 1_000, "SIGTERM");
    await driver.destroyTask(id, true);
    expect(isRunning(handle.task.pid)).toBe(false);
  });

  test("the start returns once the task itself runs, with its namespaces built", async () => {
    const { config, id } = isolatedTask("", { command: "sleep", args: ["600"] });
    const { handle } = await driver.startTask(config);
    const pid = handle.task.pid;
    // Read at once: a start that returned at the spawn would still show the nsenter role here.
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toBe("sleep\u0000600\u0000");
    for (const ns of ["mnt", "uts", "pid"]) expect(readlinkSync(`/proc/${pid}/ns/${ns}`)).not.toBe(readlinkSync(`/proc/self/ns/${ns}`));
    await driver.stopTask(id, 1_000, "SIGTERM");
    await driver.destroyTask(id, true);
  });

  test("exec runs a command inside the running task's namespaces", async () => {
    const { config, id } = isolatedTask("", { command: "sleep", args: ["600"] });
    const { handle } = await driver.startTask(config);
    const hostname = await driver.execTask(id, ["hostname"], 10_000);
    expect(hostname).toEqual({ stdout: `${config.allocId.slice(0, 8)}\n`, stderr: "", exitCode: 0 });
    const init = await driver.execTask(id, ["cat", "/proc/1/cmdline"], 10_000);
    expect(init.stdout.split("\0")[0]).toBe("sleep");
    const failing = await driver.execTask(id, ["sh", "-c", "exit 3"], 10_000);
    expect(failing.exitCode).toBe(3);
    await driver.stopTask(id, 1_000, "SIGTERM");
    await driver.destroyTask(id, true);
    expect(isRunning(handle.task.pid)).toBe(false);
  });

  test.skipIf(!capabilities.root)("the memory limit OOM-kills an allocating task, reported as OOM killed", async () => {
    const { config, id } = isolatedTask("x=a; while true; do x=$x$x$x$x; done", { resources: { cpuMhz: 100, memoryMb: 16, memoryMaxMb: 16 } });
    await driver.startTask(config);
    const result = await driver.waitTask(id);
    expect(result.oomKilled).toBe(true);
    expect(result.signal).toBe(9);
    await driver.destroyTask(id, true);
  });

  test("after the task: no mounts under its dir on the host, no cgroup, no executor", async () => {
    const { config, id, allocDir } = isolatedTask("echo bye");
    const { handle } = await driver.startTask(config);
    await driver.waitTask(id);
    await driver.destroyTask(id, true);
    const taskDir = allocDir.taskDir("probe");
    // Only the secrets tmpfs the alloc dir itself mounted remains; the role left nothing.
    expect(mountsUnder(taskDir.root)).toEqual([taskDir.secrets]);
    if (handle.cgroup) for (const cgroupDir of cgroupDirs(handle.cgroup)) expect(existsSync(cgroupDir)).toBe(false);
    await waitFor("executor gone", () => !isRunning(handle.executor.pid));
    await allocDir.destroy();
    expect(existsSync(allocDir.path)).toBe(false);
  });

  /** The task's pids.max, read on the host from the cgroup its pid is in. */
  function pidsMax(pid: number): string {
    const line = readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n").find((entry) => /^\d+:pids:|^0::/.test(entry))!;
    const mount = capabilities.cgroups.mode === "v1" ? capabilities.cgroups.mounts.pids! : capabilities.cgroups.mode === "v2" ? capabilities.cgroups.mount : "";
    return readFileSync(join(mount, line.slice(line.lastIndexOf(":") + 1), "pids.max"), "utf8").trim();
  }

  for (const user of ["nobody", "root"]) {
    test.skipIf(!hasPython)(`a task as ${user} gets the client's pids limit, or its job's; a fork bomb stops there`, async () => {
      const defaulted = isolatedTask("", { command: "sleep", args: ["600"], user });
      const { handle } = await driver.startTask(defaulted.config);
      expect(pidsMax(handle.task.pid)).toBe(String(CLIENT_PIDS_LIMIT));
      await driver.stopTask(defaulted.id, 1_000, "SIGKILL");
      await driver.destroyTask(defaulted.id, true);

      // A fork bomb of 30: the children sleep, the parent counts what it could start.
      const forks = [
        "import os, time",
        "started = 0",
        "for _ in range(30):",
        "    try:",
        "        pid = os.fork()",
        "    except OSError as err:",
        "        print('refused', err.errno)",
        "        break",
        "    if pid == 0:",
        "        time.sleep(60)",
        "        os._exit(0)",
        "    started += 1",
        "print('started', started)",
      ].join("\n");
      const bomb = isolatedTask("", { command: "/usr/bin/python3", args: ["-c", forks], user, driverConfig: { pids_limit: 20 } });
      await driver.startTask(bomb.config);
      await driver.waitTask(bomb.id);
      // 20 in all: python and 19 children; EAGAIN for the 20th.
      expect(readFileSync(bomb.config.stdoutPath, "utf8")).toBe("refused 11\nstarted 19\n");
      await driver.destroyTask(bomb.id, true);
    });
  }

  test.skipIf(!hasPython)("a job's syscall_add that the operator allows lifts that call alone, for the task and an exec into it", async () => {
    const probe = "import ctypes; libc = ctypes.CDLL(None, use_errno=True); print(libc.syscall(250 if __import__('platform').machine() == 'x86_64' else 219, 0, -3, 0) >= 0)";
    const { config, id } = isolatedTask("", { command: "sleep", args: ["600"], driverConfig: { syscall_add: ["keyctl"] } });
    await driver.startTask(config);
    const inside = await driver.execTask(id, ["/usr/bin/python3", "-c", probe], 10_000);
    expect(inside).toEqual({ stdout: "True\n", stderr: "", exitCode: 0 });
    const unshare = await driver.execTask(id, ["unshare", "-U", "true"], 10_000);
    expect(unshare.exitCode).not.toBe(0);
    expect(unshare.stderr).toContain("Operation not permitted");
    await driver.stopTask(id, 1_000, "SIGKILL");
    await driver.destroyTask(id, true);
  });
});
