/**
 * The escape suite: a task (as root, with Nomad's default capabilities, to
 * make each attempt as strong as it can be) trying to reach host files.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXIT_SETUP_FAILED } from "../../src/nsenter/errors.ts";
import { startIsolatedTask } from "../../src/nsenter/launch.ts";
import { capabilities } from "../helpers/index.ts";
import { allocLayout, isolationSpec, killStarted, runScript, writeSpec } from "./fixture.ts";

afterEach(killStarted);

/** A host directory beside the alloc dir holding a file the task must never read. */
function hostSecret(root: string): string {
  const dir = join(root, "host-secret");
  mkdirSync(dir);
  writeFileSync(join(dir, "marker"), "host-only");
  return dir;
}

describe.skipIf(!capabilities.root)("escape suite", () => {
  test("symlinks planted in local/ resolve inside the chroot, never on the host", async () => {
    const layout = allocLayout();
    const secret = hostSecret(layout.root);
    const local = join(layout.taskDir, "local");
    symlinkSync(secret, join(local, "absolute"));
    symlinkSync("../../host-secret", join(local, "relative"));
    symlinkSync("/", join(local, "root"));
    const script = "cat /local/absolute/marker; cat /local/relative/marker; ls /local/root/";
    const result = await runScript(layout, script, { user: "root" });
    expect(result.stdout + result.stderr).not.toContain("host-only");
    expect(result.stderr.match(/No such file or directory/g)?.length).toBe(2);
    expect(result.stdout.split("\n")).toEqual(expect.arrayContaining(["alloc", "local", "secrets"]));
  });

  test("a symlink planted in place of a task dir is refused before anything is mounted", async () => {
    const layout = allocLayout();
    const secret = hostSecret(layout.root);
    rmSync(join(layout.taskDir, "tmp"), { recursive: true });
    symlinkSync(secret, join(layout.taskDir, "tmp"));
    const result = await runScript(layout, "cat /tmp/marker");
    expect(result.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(result.stderr).toContain("tmp is a symlink");
    expect(result.stdout).not.toContain("host-only");
  });

  test("'..' never leaves the root", async () => {
    const layout = allocLayout();
    hostSecret(layout.root);
    const script = "cd /../../..; pwd; ls; ls /alloc/../../../host-secret 2>&1; cat /local/../../../../host-secret/marker 2>&1";
    const result = await runScript(layout, script, { user: "root" });
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe("/");
    expect(lines).toEqual(expect.arrayContaining(["alloc", "local", "secrets", "usr"]));
    expect(result.stdout).not.toContain("host-only");
    expect(result.stdout.match(/host-secret.*No such file or directory/g)?.length).toBe(2);
  });

  // The classic chroot escape (chroot into a subdir keeping a descriptor outside, climb, chroot "."):
  // sys_chroot is in the default set, but the host's root was detached after pivot_root.
  test.skipIf(!existsSync("/usr/bin/python3"))("the chroot escape climbs no higher than the task's root", async () => {
    const layout = allocLayout();
    hostSecret(layout.root);
    const escape = [
      "import os",
      "print(sorted(os.listdir('/')))",
      "os.mkdir('/tmp/jail'); outside = os.open('/', os.O_RDONLY)",
      "os.chroot('/tmp/jail'); os.fchdir(outside)",
      "[os.chdir('..') for _ in range(64)]",
      "os.chroot('.'); print(sorted(os.listdir('/')))",
    ].join("\n");
    const result = await runScript(layout, "", { user: "root", argv: ["/usr/bin/python3", "-c", escape] });
    expect(result.stderr).toBe("");
    const [before, after] = result.stdout.trim().split("\n");
    expect(before).toContain("'secrets'");
    expect(after).toBe(before!);
  });

  test("a root task cannot remount / or /usr read-write, nor mount or unmount anything", async () => {
    const layout = allocLayout();
    const script = [
      "mount -o remount,rw / 2>&1 || echo remount-root-denied",
      "mount -o remount,rw /usr 2>&1 || echo remount-usr-denied",
      "mount -t tmpfs none /local 2>&1 || echo mount-denied",
      "umount /proc/sys 2>&1 || echo umount-denied",
      "touch /usr/drover-escape 2>&1 || echo write-denied",
    ].join("; ");
    const result = await runScript(layout, script, { user: "root" });
    for (const denied of ["remount-root-denied", "remount-usr-denied", "mount-denied", "umount-denied", "write-denied"]) {
      expect(result.stdout).toContain(denied);
    }
    expect(existsSync("/usr/drover-escape")).toBe(false);
  });

  test("another alloc's dir is out of reach", async () => {
    const mine = allocLayout();
    const other = allocLayout();
    writeFileSync(join(other.allocDir, "data", "theirs"), "theirs");
    const script = [
      `(echo evil > ${other.allocDir}/data/evil) 2>/dev/null || echo write-failed`,
      `cat ${other.allocDir}/data/theirs 2>/dev/null || echo read-failed`,
      `ls ${other.root} 2>/dev/null || echo list-failed`,
    ].join("; ");
    const result = await runScript(mine, script, { user: "root" });
    expect(result.stdout).toBe("write-failed\nread-failed\nlist-failed\n");
    expect(existsSync(join(other.allocDir, "data", "evil"))).toBe(false);
  });

  // The agent, executor and logmon write under these on the host; a symlink put in their place would lead them out.
  test("the alloc's logs, data and tmp dirs cannot be swapped for a symlink", async () => {
    const layout = allocLayout();
    const script = "for dir in logs data tmp; do mv /alloc/$dir /alloc/$dir.moved 2>/dev/null || rmdir /alloc/$dir 2>/dev/null || echo pinned:$dir; done";
    const result = await runScript(layout, script, { user: "root" });
    expect(result.stdout).toBe("pinned:logs\npinned:data\npinned:tmp\n");
    for (const dir of ["logs", "data", "tmp"]) expect(lstatSync(join(layout.allocDir, dir)).isDirectory()).toBe(true);
  });

  test("mknod makes no usable device: every writable mount is nodev", async () => {
    const layout = allocLayout();
    const script = "for dir in /tmp /local /alloc/data /secrets /dev/shm; do mknod $dir/disk b 254 0 2>/dev/null && echo made:$dir; head -c 1 $dir/disk >/dev/null 2>&1 && echo readable:$dir; done";
    const result = await runScript(layout, script, { user: "root" });
    // mknod itself is allowed (the mknod capability), so the nodes exist; none can be opened.
    expect(result.stdout).toBe(["/tmp", "/local", "/alloc/data", "/secrets", "/dev/shm"].map((dir) => `made:${dir}\n`).join(""));
  });
});

describe.skipIf(!capabilities.root).each(["nobody", "root"])("what a task as %s learns of the host", (user) => {
  // Root reads /etc/shadow through the live bind of /etc otherwise; nobody is kept out by its mode alone.
  test("the host's password hashes and private keys read as nothing", async () => {
    const script = "for file in /etc/shadow /etc/gshadow; do echo \"$file=$(wc -c < $file 2>&1)\"; done; ls -A /etc/ssl/private 2>&1 | wc -l; grep -c '^root:' /etc/passwd";
    const result = await runScript(allocLayout(), script, { user });
    // passwd stays: names for ids are what tasks need from /etc.
    expect(result.stdout).toBe("/etc/shadow=0\n/etc/gshadow=0\n0\n1\n");
  });

  test("its own cgroup is the root of every hierarchy it sees, and its outputs are named inside /alloc", async () => {
    const layout = allocLayout();
    const logs = join(layout.allocDir, "logs");
    const out = openSync(join(logs, ".web.stdout"), "a");
    const err = openSync(join(logs, ".web.stderr"), "a");
    try {
      const spec = isolationSpec(layout, { user, argv: ["/bin/sh", "-c", "readlink /proc/self/fd/1 /proc/self/fd/2; cut -d: -f3 /proc/self/cgroup | sort -u"] });
      const child = startIsolatedTask(writeSpec(layout, spec), { env: {}, stdout: out, stderr: err });
      expect((await child.exited).exitCode).toBe(0);
    } finally {
      closeSync(out);
      closeSync(err);
    }
    expect(readFileSync(join(logs, ".web.stderr"), "utf8")).toBe("");
    expect(readFileSync(join(logs, ".web.stdout"), "utf8")).toBe("/alloc/logs/.web.stdout\n/alloc/logs/.web.stderr\n/\n");
  });
});
