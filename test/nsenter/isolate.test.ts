/**
 * An isolated task, seen from inside (scripts it runs) and from the host
 * (/proc of its pid): namespaces, filesystem, identity, resources, exit.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { capabilityMask, DEFAULT_EXEC_CAPABILITIES } from "../../src/lib/capabilities.ts";
import { EXIT_NOT_FOUND, EXIT_SETUP_FAILED } from "../../src/nsenter/errors.ts";
import { MNT_DETACH, mount, MS_NODEV, MS_NOEXEC, MS_NOSUID, umount2 } from "../../src/runtime/libc.ts";
import { capabilities, processState, waitFor } from "../helpers/index.ts";
import { allocLayout, finish, isolationSpec, killStarted, memoryCgroupRoot, runScript, startTask } from "./fixture.ts";

afterEach(killStarted);

const NOBODY_UID = 65534;

function statusField(pid: number, field: string): string {
  const match = new RegExp(`^${field}:\\s*(.*)$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match?.[1]?.trim() ?? "";
}

/** Waits until `pid` has exec'd into `comm` (the task), past the role. */
async function waitForExec(pid: number, comm: string): Promise<void> {
  await waitFor(`pid ${pid} to become ${comm}`, () => readFileSync(`/proc/${pid}/comm`, "utf8").trim() === comm);
}

describe.skipIf(!capabilities.root)("isolated task", () => {
  test.skipIf(!existsSync("/usr/bin/ps"))("is PID 1 of its own PID namespace and sees only its own processes", async () => {
    const layout = allocLayout();
    const result = await runScript(layout, "echo pid=$$; ps -e -o pid=,comm=; tr '\\0' ' ' < /proc/1/cmdline");
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toBe("pid=1");
    const processes = lines.slice(1, -1).map((line) => line.trim().split(/\s+/));
    expect(processes.map(([, comm]) => comm).sort()).toEqual(["ps", "sh"]);
    expect(processes.find(([, comm]) => comm === "sh")?.[0]).toBe("1");
    expect(lines.at(-1)?.trim()).toStartWith("/bin/sh -c echo pid=$$");
  });

  test("has the alloc's hostname, not the host's", async () => {
    const result = await runScript(allocLayout(), "uname -n");
    expect(result.stdout.trim()).toBe("a1b2c3d4");
    expect(hostname()).not.toBe("a1b2c3d4");
  });

  test("sees neither the host's /root nor its /tmp, and has its own /local, /tmp, /alloc", async () => {
    const layout = allocLayout();
    const hostMarker = join(tmpdir(), `drover-host-marker-${process.pid}`);
    writeFileSync(hostMarker, "host");
    writeFileSync(join(layout.taskDir, "tmp", "task-tmp-file"), "");
    writeFileSync(join(layout.taskDir, "local", "task-local-file"), "");
    try {
      const result = await runScript(layout, "test -e /root && echo root-visible; ls -A /tmp; ls -A /local; ls -A /alloc; ls /");
      expect(result.stdout).not.toContain("root-visible");
      expect(result.stdout).not.toContain("drover-host-marker");
      expect(result.stdout.split("\n")).toEqual(expect.arrayContaining(["task-tmp-file", "task-local-file", "data", "logs"]));
      expect(result.stdout).not.toContain("work");
    } finally {
      rmSync(hostMarker);
    }
  });

  test("cannot write to the system dirs or its root, even as root; can write to local, tmp, alloc", async () => {
    const layout = allocLayout();
    const script = [
      "touch /usr/drover-escape 2>&1",
      "touch /etc/drover-escape 2>&1",
      "touch /drover-escape 2>&1",
      "echo l > /local/out && echo t > /tmp/out && echo a > /alloc/data/out && echo wrote",
    ].join("; ");
    const result = await runScript(layout, script, { user: "root" });
    expect(result.stdout.match(/Read-only file system/g)?.length).toBe(3);
    expect(result.stdout).toContain("wrote");
    expect(existsSync("/usr/drover-escape")).toBe(false);
    expect(existsSync("/etc/drover-escape")).toBe(false);
    expect(readFileSync(join(layout.taskDir, "local", "out"), "utf8")).toBe("l\n");
    expect(readFileSync(join(layout.taskDir, "tmp", "out"), "utf8")).toBe("t\n");
    expect(readFileSync(join(layout.allocDir, "data", "out"), "utf8")).toBe("a\n");
  });

  test("runs as nobody by default, without supplementary groups or capabilities, with no_new_privs", async () => {
    const result = await runScript(allocLayout(), "id -u; id -G; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status");
    const [uid, groups, ...caps] = result.stdout.trim().split("\n");
    expect(Number(uid)).toBe(NOBODY_UID);
    expect(groups?.trim().split(" ")).toHaveLength(1);
    const fields = Object.fromEntries(caps.map((line) => line.split(/:\s*/)));
    expect(BigInt(`0x${fields.CapEff}`)).toBe(0n);
    expect(BigInt(`0x${fields.CapPrm}`)).toBe(0n);
    expect(BigInt(`0x${fields.CapBnd}`)).toBe(capabilityMask(DEFAULT_EXEC_CAPABILITIES));
    expect(fields.NoNewPrivs).toBe("1");
  });

  test("a root task keeps exactly Nomad's default exec capabilities", async () => {
    const result = await runScript(allocLayout(), "grep -E '^Cap(Eff|Bnd)' /proc/self/status", { user: "root" });
    const masks = result.stdout.trim().split("\n").map((line) => BigInt(`0x${line.split(/:\s*/)[1]}`));
    expect(masks).toEqual([capabilityMask(DEFAULT_EXEC_CAPABILITIES), capabilityMask(DEFAULT_EXEC_CAPABILITIES)]);
  });

  test("ends as one thread with fds 0-2, default signal state and exactly the spec's environment", async () => {
    const layout = allocLayout();
    const env = { PATH: "/usr/bin:/bin", NOMAD_TASK_DIR: "/local", BUN_OPTIONS: "--smol", BUN_INSTALL: "/x" };
    const task = startTask(layout, isolationSpec(layout, { argv: ["sleep", "30"], env }));
    await waitForExec(task.pid, "sleep");
    // execve names the process before it closes the close-on-exec descriptors: wait for the exec to finish.
    await waitFor("the exec's close-on-exec descriptors to close", () => readdirSync(`/proc/${task.pid}/fd`).length <= 3).catch(() => undefined);
    expect(statusField(task.pid, "Threads")).toBe("1");
    expect(statusField(task.pid, "SigBlk")).toBe("0000000000000000");
    expect(statusField(task.pid, "SigIgn")).toBe("0000000000000000");
    expect(readdirSync(`/proc/${task.pid}/fd`).sort()).toEqual(["0", "1", "2"]);
    const environ = readFileSync(`/proc/${task.pid}/environ`, "utf8").split("\0").filter(Boolean).sort();
    expect(environ).toEqual(["NOMAD_TASK_DIR=/local", "PATH=/usr/bin:/bin"]);
    task.kill("SIGKILL");
    expect(await task.exited).toEqual({ exitCode: 137, signal: 9 });
  });

  test("its exit code reaches the executor unchanged", async () => {
    const result = await runScript(allocLayout(), "exit 7");
    expect([result.exitCode, result.signal]).toEqual([7, 0]);
  });

  test("SIGKILL of the task ends every process in its namespace", async () => {
    const layout = allocLayout();
    const task = startTask(layout, isolationSpec(layout, { argv: ["/bin/sh", "-c", "sleep 300 & sleep 300 & wait"] }));
    const children = await waitFor("two sleeping children", () => {
      const list = readFileSync(`/proc/${task.pid}/task/${task.pid}/children`, "utf8").trim().split(" ").filter(Boolean);
      return list.length === 2 ? list.map(Number) : null;
    });
    task.kill("SIGKILL");
    expect((await task.exited).signal).toBe(9);
    for (const child of children) expect(processState(child)).toBeNull();
  });

  test("mounts nothing on the host: none during the run, none after; the task dir removes cleanly", async () => {
    const layout = allocLayout();
    const task = startTask(layout, isolationSpec(layout, { argv: ["sleep", "30"] }));
    await waitForExec(task.pid, "sleep");
    expect(mountsUnder(layout.root)).toEqual([]);
    // The task's own namespace does hold the mounts.
    expect(readFileSync(`/proc/${task.pid}/mountinfo`, "utf8")).toContain(" /secrets ");
    task.kill("SIGKILL");
    await task.exited;
    expect(mountsUnder(layout.root)).toEqual([]);
    rmSync(layout.root, { recursive: true });
    expect(existsSync(layout.root)).toBe(false);
  });

  test("secrets is a 0700 noexec tmpfs of the task user, seeded from the task dir, private to the task", async () => {
    const layout = allocLayout();
    writeFileSync(join(layout.taskDir, "secrets", "token"), "s3cret");
    const script = "stat -c '%a %u' /secrets; cat /secrets/token; echo; grep ' /secrets ' /proc/self/mountinfo; echo new > /secrets/new";
    const result = await runScript(layout, script);
    const [mode, token, mountLine] = result.stdout.trim().split("\n");
    expect(mode).toBe(`700 ${NOBODY_UID}`);
    expect(token).toBe("s3cret");
    expect(mountLine).toMatch(/ \/secrets \S*noexec\S* - tmpfs /);
    expect(existsSync(join(layout.taskDir, "secrets", "new"))).toBe(false);
  });

  test.skipIf(!existsSync("/usr/sbin/ip") && !existsSync("/usr/bin/ip"))("network none has only loopback, up; the default shares the host's network", async () => {
    const layout = allocLayout();
    const none = await runScript(layout, "ip -o link", { network: "none" });
    const links = none.stdout.trim().split("\n");
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(/^1: lo: <[^>]*\bUP\b/);
    const task = startTask(layout, isolationSpec(layout, { argv: ["sleep", "30"] }));
    await waitForExec(task.pid, "sleep");
    expect(readlinkSync(`/proc/${task.pid}/ns/net`)).toBe(readlinkSync("/proc/self/ns/net"));
    expect(readlinkSync(`/proc/${task.pid}/ns/mnt`)).not.toBe(readlinkSync("/proc/self/ns/mnt"));
  });

  test("rlimits and oom_score_adj apply", async () => {
    const result = await runScript(allocLayout(), "ulimit -n; cat /proc/self/oom_score_adj", {
      rlimits: { nofile: { soft: 123, hard: 456 } },
      oomScoreAdj: 500,
    });
    expect(result.stdout.trim().split("\n")).toEqual(["123", "500"]);
  });

  test.skipIf(!memoryCgroupRoot)("joins the cgroups in the spec (a memory cgroup), in a cgroup namespace rooted there", async () => {
    const cgroup = join(memoryCgroupRoot!, `drover-nsenter-test-${process.pid}`);
    mkdirSync(cgroup);
    const memoryLine = (text: string) => text.split("\n").find((entry) => (capabilities.cgroups.mode === "v1" ? /^\d+:memory:/ : /^0::/).test(entry));
    try {
      const layout = allocLayout();
      const task = startTask(layout, isolationSpec(layout, { argv: ["/bin/sh", "-c", "cat /proc/self/cgroup; exec sleep 600"], cgroups: [cgroup] }));
      await waitForExec(task.pid, "sleep");
      expect(memoryLine(readFileSync(`/proc/${task.pid}/cgroup`, "utf8"))).toEndWith(`/drover-nsenter-test-${process.pid}`);
      task.kill("SIGKILL");
      // Inside, its own cgroup is the root: nothing above it has a name.
      expect(memoryLine((await finish(task)).stdout)).toEndWith(":/");
    } finally {
      rmdirSync(cgroup);
    }
  });

  test.skipIf(!memoryCgroupRoot)("a memory limit on its cgroup OOM-kills it, and the executor sees SIGKILL", async () => {
    const cgroup = join(memoryCgroupRoot!, `drover-nsenter-oom-test-${process.pid}`);
    mkdirSync(cgroup);
    const v1 = capabilities.cgroups.mode === "v1";
    writeFileSync(join(cgroup, v1 ? "memory.limit_in_bytes" : "memory.max"), String(32 << 20));
    if (!v1 && existsSync(join(cgroup, "memory.swap.max"))) writeFileSync(join(cgroup, "memory.swap.max"), "0");
    try {
      const result = await runScript(allocLayout(), "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived", { cgroups: [cgroup] });
      expect([result.exitCode, result.signal, result.stdout]).toEqual([137, 9, ""]);
      const events = readFileSync(join(cgroup, v1 ? "memory.oom_control" : "memory.events"), "utf8");
      expect(Number(/^oom_kill (\d+)$/m.exec(events)?.[1])).toBeGreaterThan(0);
    } finally {
      rmdirSync(cgroup);
    }
  });

  test("shares a secrets tmpfs the host already mounted, read-write both ways", async () => {
    const layout = allocLayout();
    const secrets = join(layout.taskDir, "secrets");
    expect(mount("tmpfs", secrets, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=0777")).toBe(0);
    try {
      writeFileSync(join(secrets, "token"), "from-host");
      const result = await runScript(layout, "cat /secrets/token; echo; echo from-task > /secrets/reply; grep -c ' /secrets .*noexec' /proc/self/mountinfo");
      expect(result.stdout).toBe("from-host\n1\n");
      expect(readFileSync(join(secrets, "reply"), "utf8")).toBe("from-task\n");
    } finally {
      umount2(secrets, MNT_DETACH);
    }
    expect(mountsUnder(layout.root)).toEqual([]);
  });

  test("looks the command up in PATH inside the chroot, or relative to cwd; a missing one exits 127", async () => {
    const layout = allocLayout();
    const found = await finish(startTask(layout, isolationSpec(layout, { argv: ["echo", "hi"] })));
    expect(found.stdout).toBe("hi\n");
    writeFileSync(join(layout.taskDir, "local", "hello.sh"), "#!/bin/sh\necho hello from $0\n", { mode: 0o755 });
    const relative = await finish(startTask(layout, isolationSpec(layout, { argv: ["local/hello.sh"] })));
    expect(relative.stdout).toBe("hello from local/hello.sh\n");
    const missing = await finish(startTask(layout, isolationSpec(layout, { argv: ["drover-no-such-command"] })));
    expect(missing.exitCode).toBe(EXIT_NOT_FOUND);
    expect(missing.stderr).toContain("drover-no-such-command: not found in PATH");
  });

  test("a failed setup exits 125 and says what failed", async () => {
    const layout = allocLayout();
    rmSync(join(layout.taskDir, "local"), { recursive: true });
    const noLocal = await runScript(layout, "true");
    expect(noLocal.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(noLocal.stderr).toContain(`${layout.taskDir}/local does not exist`);
    const noUser = await runScript(allocLayout(), "true", { user: "drover-no-such-user" });
    expect(noUser.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(noUser.stderr).toContain('user "drover-no-such-user" does not exist');
    const badSpec = await runScript(allocLayout(), "true", { cwd: "/local/../../etc" });
    expect(badSpec.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(badSpec.stderr).toContain("cwd: must be an absolute path without");
  });
});
