/**
 * Binds below a directory a task can write to: they land where the walk
 * says, never through a symlink, read-only from the start when asked, and
 * come off again, stacked ones included. A mount(2) that says ENOENT is
 * made again a few times (Linux says so now and then under churn).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { join } from "node:path";
import { mountsUnder, parseMountinfo } from "../../src/lib/procfs.ts";
import { bindBeneath, MOUNT_ENOENT_TRIES, mountRetryingEnoent, unbindBeneath } from "../../src/runtime/mounts.ts";
import { capabilities, tempDir } from "../helpers/index.ts";

const skip = !capabilities.root;

function fixture() {
  const dir = tempDir("drover-mounts-");
  const source = join(dir, "volume");
  mkdirSync(source);
  writeFileSync(join(source, "hello.txt"), "from the volume");
  const base = join(dir, "task");
  mkdirSync(join(base, "local"), { recursive: true });
  return { dir, source, base };
}

const options = (point: string) => parseMountinfo(readFileSync("/proc/self/mountinfo", "utf8")).findLast((m) => m.mountPoint === point)?.options ?? [];

describe.skipIf(skip)(`bindBeneath and unbindBeneath${skip ? " (skipped: needs root to mount)" : ""}`, () => {
  test("a read-only bind shows the volume, refuses writes, is nosuid and nodev, and comes off", () => {
    const { source, base } = fixture();
    bindBeneath(source, base, "local/a/b", { readOnly: true });
    const point = join(base, "local/a/b");
    expect(readFileSync(join(point, "hello.txt"), "utf8")).toBe("from the volume");
    expect(() => writeFileSync(join(point, "new.txt"), "x")).toThrow("EROFS");
    expect(options(point)).toEqual(expect.arrayContaining(["ro", "nosuid", "nodev"]));
    expect(unbindBeneath(base, "local/a/b")).toBe(1);
    expect(mountsUnder(base)).toEqual([]);
    // The directories made on the way stay, empty: the volume's files were never copied.
    expect(readdirSync(point)).toEqual([]);
  });

  test("a read-write bind writes through to the host directory", () => {
    const { source, base } = fixture();
    bindBeneath(source, base, "data", { readOnly: false });
    writeFileSync(join(base, "data", "written.txt"), "by the task");
    expect(readFileSync(join(source, "written.txt"), "utf8")).toBe("by the task");
    expect(options(join(base, "data"))).toEqual(expect.arrayContaining(["rw", "nosuid", "nodev"]));
    expect(unbindBeneath(base, "data")).toBe(1);
  });

  test("a symlink in place of any component is refused, and nothing is mounted where it points", () => {
    const { dir, source, base } = fixture();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(join(elsewhere, "x"), { recursive: true });
    symlinkSync(elsewhere, join(base, "local", "evil"));
    expect(() => bindBeneath(source, base, "local/evil/x", { readOnly: false })).toThrow("local/evil is not a directory (a symlink or a file is in its place)");
    symlinkSync(join(elsewhere, "x"), join(base, "last"));
    expect(() => bindBeneath(source, base, "last", { readOnly: false })).toThrow("last is not a directory");
    expect(mountsUnder(dir)).toEqual([]);
    expect(readdirSync(join(elsewhere, "x"))).toEqual([]);
  });

  test("unbinding never follows a symlink swapped in after the bind: it refuses, and the host's mount stays", () => {
    const { dir, source, base } = fixture();
    bindBeneath(source, base, "local/a/b", { readOnly: true });
    // A second bind elsewhere stands for a host mount a path could be pointed at.
    const hostMount = join(dir, "host");
    mkdirSync(join(hostMount, "a", "b"), { recursive: true });
    bindBeneath(source, hostMount, "a/b", { readOnly: true });
    renameSync(join(base, "local", "a"), join(base, "local", "moved"));
    symlinkSync(join(hostMount, "a"), join(base, "local", "a"));
    expect(() => unbindBeneath(base, "local/a/b")).toThrow("local/a is not a directory");
    expect(mountsUnder(hostMount)).toEqual([join(hostMount, "a/b")]);
    expect(unbindBeneath(base, "local/moved/b")).toBe(1);
    expect(unbindBeneath(hostMount, "a/b")).toBe(1);
  });

  test("stacked binds all come off; a path that is gone or holds no mount has nothing to detach", () => {
    const { source, base } = fixture();
    bindBeneath(source, base, "data", { readOnly: true });
    bindBeneath(source, base, "data", { readOnly: false });
    expect(mountsUnder(base)).toHaveLength(2);
    expect(unbindBeneath(base, "data")).toBe(2);
    expect(unbindBeneath(base, "data")).toBe(0);
    expect(unbindBeneath(base, "gone/data")).toBe(0);
  });

  test("paths that are not below the base are refused before anything is made", () => {
    const { source, base } = fixture();
    for (const relative of ["", "/", "../x", "local/../../x", "./x"]) {
      expect(() => bindBeneath(source, base, relative, { readOnly: true })).toThrow();
    }
    expect(existsSync(join(base, "..", "x"))).toBe(false);
    expect(mountsUnder(base)).toEqual([]);
  });

  test("a source that does not exist fails with its reason and leaves no mount", () => {
    const { dir, base } = fixture();
    expect(() => bindBeneath(join(dir, "missing"), base, "data", { readOnly: true })).toThrow(`cannot bind ${join(dir, "missing")}: No such file or directory`);
    expect(mountsUnder(base)).toEqual([]);
  });
});

describe("a mount that says ENOENT", () => {
  test("is made again, up to its limit; any other failure is final at once", () => {
    const { ENOENT, EPERM } = osConstants.errno;
    // Answers (0 or an errno) in turn, as mount(2) would give them.
    const scripted = (answers: number[]) => {
      let calls = 0;
      let last = 0;
      const call = () => {
        last = answers[Math.min(calls++, answers.length - 1)]!;
        return last === 0 ? 0 : -1;
      };
      return { call, errno: () => last, calls: () => calls };
    };
    const once = scripted([ENOENT, 0]);
    expect(mountRetryingEnoent(once.call, once.errno)).toBe(0);
    expect(once.calls()).toBe(2);
    const always = scripted([ENOENT]);
    expect(mountRetryingEnoent(always.call, always.errno)).toBe(ENOENT);
    expect(always.calls()).toBe(MOUNT_ENOENT_TRIES);
    const refused = scripted([EPERM, 0]);
    expect(mountRetryingEnoent(refused.call, refused.errno)).toBe(EPERM);
    expect(refused.calls()).toBe(1);
  });
});
