import { describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { AllocDir, protectAllocRoot, releaseAllocRoot } from "../../../src/client/allocdir/alloc-dir.ts";
import { spawnProcess } from "../../../src/runtime/spawn.ts";
import { capabilities, tempDir } from "../../helpers/index.ts";

const mounted = (path: string) => readFileSync("/proc/self/mountinfo", "utf8").includes(` ${path} `);

describe("alloc dir", () => {
  test("Nomad's layout with shared dirs writable by any task user", () => {
    const dir = new AllocDir(tempDir(), randomUUID());
    dir.build();
    const task = dir.buildTask("web", { secretsTmpfs: false });
    for (const path of [dir.logs, dir.data, dir.tmp, task.local, task.tmp]) expect(existsSync(path)).toBe(true);
    expect(statSync(dir.logs).mode & 0o7777).toBe(0o1777);
    expect(statSync(task.secrets).mode & 0o777).toBe(0o700);
    expect(task.local).toBe(join(dir.path, "web", "local"));
  });

  test("names that would escape the alloc dir are refused", () => {
    const dir = new AllocDir(tempDir(), randomUUID());
    for (const bad of ["..", "../x", "a/b", "alloc", "a b", ""]) expect(() => dir.taskDir(bad)).toThrow(/cannot name a directory/);
    expect(() => new AllocDir(tempDir(), "../../etc")).toThrow(/invalid alloc id/);
  });

  test.skipIf(!capabilities.root)("secrets is a noexec tmpfs, and destroy unmounts it and deletes everything", async () => {
    const dir = new AllocDir(tempDir(), randomUUID());
    dir.build();
    const task = dir.buildTask("web", { secretsTmpfs: true, owner: { uid: 65534, gid: 65534 } });
    expect(mounted(task.secrets)).toBe(true);
    const line = readFileSync("/proc/self/mountinfo", "utf8").split("\n").find((l) => l.includes(` ${task.secrets} `))!;
    expect(line).toContain("noexec");
    expect(statSync(task.local).uid).toBe(65534);
    await dir.destroy();
    expect(mounted(task.secrets)).toBe(false);
    expect(existsSync(dir.path)).toBe(false);
  });

  test.skipIf(!capabilities.root)("destroy does not follow a symlink or a bind mount out of the alloc dir", async () => {
    const outside = tempDir();
    writeFileSync(join(outside, "precious"), "keep me");
    const dir = new AllocDir(tempDir(), randomUUID());
    dir.build();
    const task = dir.buildTask("web", { secretsTmpfs: false });
    symlinkSync(outside, join(task.local, "link-out"));
    const bind = join(task.local, "bind-out");
    mkdirSync(bind);
    expect(Bun.spawnSync(["mount", "--bind", outside, bind]).exitCode).toBe(0);
    await dir.destroy();
    expect(readFileSync(join(outside, "precious"), "utf8")).toBe("keep me");
    expect(existsSync(dir.path)).toBe(false);
  });

  // A root task sees alloc/ as /alloc and can swap what is in it for a symlink to a host directory.
  test("a symlink put in place of a shared dir is refused, never chmodded through", () => {
    const outside = tempDir();
    chmodSync(outside, 0o755);
    const dir = new AllocDir(tempDir(), randomUUID());
    dir.build();
    renameSync(dir.logs, `${dir.logs}.moved`);
    symlinkSync(outside, dir.logs);
    expect(() => dir.build()).toThrow(`${dir.logs} is not a directory`);
    expect(statSync(outside).mode & 0o7777).toBe(0o755);
  });

  test("a task dir whose secrets/ became a symlink is refused before any chmod, chown or mount", () => {
    const outside = tempDir();
    chmodSync(outside, 0o755);
    const dir = new AllocDir(tempDir(), randomUUID());
    dir.build();
    const task = dir.buildTask("web", { secretsTmpfs: false });
    renameSync(task.secrets, `${task.secrets}.moved`);
    symlinkSync(outside, task.secrets);
    expect(() => dir.buildTask("web", { secretsTmpfs: capabilities.root, owner: { uid: 65534, gid: 65534 } })).toThrow(`${task.secrets} is not a directory`);
    expect(statSync(outside).mode & 0o7777).toBe(0o755);
    expect(mounted(outside)).toBe(false);
  });

  test("a previous alloc's data that became a symlink is not migrated", () => {
    const root = tempDir();
    const outside = tempDir();
    chmodSync(outside, 0o755);
    const previous = new AllocDir(root, randomUUID());
    previous.build();
    renameSync(previous.data, `${previous.data}.moved`);
    symlinkSync(outside, previous.data);
    const next = new AllocDir(root, randomUUID());
    next.build();
    expect(() => next.moveDataFrom(previous)).toThrow(`cannot migrate ${previous.data}: not a directory`);
    expect(statSync(outside).mode & 0o7777).toBe(0o755);
    expect(statSync(next.data).isDirectory()).toBe(true);
  });

  test("sticky data moves to the replacement alloc", () => {
    const root = tempDir();
    const previous = new AllocDir(root, randomUUID());
    previous.build();
    writeFileSync(join(previous.data, "db"), "state");
    const next = new AllocDir(root, randomUUID());
    next.build();
    next.moveDataFrom(previous);
    expect(readFileSync(join(next.data, "db"), "utf8")).toBe("state");
    expect(existsSync(previous.data)).toBe(false);
  });

  // A root task can leave a setuid-root program in alloc/data; on the host it must run as whoever starts it.
  test.skipIf(!capabilities.root || !existsSync("/usr/bin/id"))("the alloc root is nosuid and nodev on the host, made so once, released with the last alloc dir", async () => {
    const top = tempDir();
    chmodSync(top, 0o711);
    const root = join(top, "allocs");
    protectAllocRoot(root);
    protectAllocRoot(root);
    const lines = readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((line) => line.split(" ")[4] === root);
    expect(lines.length).toBe(1);
    expect(lines[0]!.split(" ")[5]!.split(",")).toEqual(expect.arrayContaining(["nosuid", "nodev"]));

    const dir = new AllocDir(root, randomUUID());
    dir.build();
    const planted = join(dir.data, "id");
    copyFileSync("/usr/bin/id", planted);
    chmodSync(planted, 0o4755);
    const child = spawnProcess({ argv: [planted, "-u"], env: {}, uid: 65534, gid: 65534, stdout: "pipe" });
    expect((await new Response(child.stdout).text()).trim()).toBe("65534");
    await child.exited;

    // At agent stop the bind stays while an alloc dir does, and goes with the last.
    releaseAllocRoot(root);
    expect(readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((line) => line.split(" ")[4] === root).length).toBe(1);
    await dir.destroy();
    releaseAllocRoot(root);
    expect(readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((line) => line.split(" ")[4] === root).length).toBe(0);
  });
});
