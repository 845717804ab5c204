/**
 * Host volumes in an isolated task's root (volume_mount under the exec
 * driver), seen from inside: where they land, read-only enforced, nosuid and
 * nodev kept, never bound through a symlink, and nothing left on the host.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { EXIT_SETUP_FAILED } from "../../src/nsenter/errors.ts";
import { IsolationSpecSchema } from "../../src/nsenter/spec.ts";
import { capabilities, tempDir } from "../helpers/index.ts";
import { allocLayout, isolationSpec, killStarted, runScript } from "./fixture.ts";

afterEach(killStarted);

function hostVolume(): string {
  const dir = join(tempDir("drover-nsenter-volume-"), "shared");
  mkdirSync(dir, { mode: 0o777 });
  writeFileSync(join(dir, "hello.txt"), "from the host volume");
  return dir;
}

describe.skipIf(!capabilities.root)(`an exec task's host volumes${capabilities.root ? "" : " (skipped: needs root)"}`, () => {
  test("are bound at their destination, in the chroot or below /local; read-only ones refuse writes, even to root", async () => {
    const host = hostVolume();
    const layout = allocLayout();
    const volumes = [
      { taskPath: "/srv/data", hostPath: host, readOnly: false },
      { taskPath: "/local/ro", hostPath: host, readOnly: true },
    ];
    const script = [
      "cat /srv/data/hello.txt; echo",
      "echo written > /srv/data/by-task.txt && echo wrote-rw",
      "cat /local/ro/hello.txt; echo",
      "touch /local/ro/x 2>&1",
      "grep -E ' /(srv/data|local/ro) ' /proc/self/mountinfo",
    ].join("; ");
    const result = await runScript(layout, script, { volumes, user: "root" });
    expect(result.stderr).toBe("");
    const lines = result.stdout.trim().split("\n");
    expect(lines.slice(0, 3)).toEqual(["from the host volume", "wrote-rw", "from the host volume"]);
    expect(lines[3]).toContain("Read-only file system");
    const [rw, ro] = [lines.find((l) => l.includes(" /srv/data "))!, lines.find((l) => l.includes(" /local/ro "))!];
    expect(rw.split(" ")[5]!.split(",")).toEqual(expect.arrayContaining(["rw", "nosuid", "nodev"]));
    expect(ro.split(" ")[5]!.split(",")).toEqual(expect.arrayContaining(["ro", "nosuid", "nodev"]));
    expect(readFileSync(join(host, "by-task.txt"), "utf8")).toBe("written\n");
    // Every bind was in the task's own mount namespace: the host has none left.
    expect(mountsUnder(layout.root)).toEqual([]);
  });

  test("a symlink the task left in /local where a destination goes fails the start, and nothing is bound where it points", async () => {
    const host = hostVolume();
    const layout = allocLayout();
    const target = tempDir("drover-nsenter-volume-target-");
    symlinkSync(target, join(layout.taskDir, "local", "data"));
    const result = await runScript(layout, "true", { volumes: [{ taskPath: "/local/data", hostPath: host, readOnly: false }], user: "root" });
    expect(result.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(result.stderr).toContain("host volume at /local/data: local/data is not a directory (a symlink or a file is in its place)");
    expect(readdirSync(target)).toEqual([]);
  });

  test("a destination inside a read-only system dir that does not exist there fails, naming it", async () => {
    const result = await runScript(allocLayout(), "true", { volumes: [{ taskPath: "/usr/drover-no-such-dir", hostPath: hostVolume(), readOnly: true }] });
    expect(result.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(result.stderr).toContain("host volume at /usr/drover-no-such-dir: usr/drover-no-such-dir: EROFS");
  });
});

test("the spec refuses volume destinations on the task's root, its own dirs, and below /dev, /proc and /secrets", () => {
  const layout = { root: "/r", allocDir: "/r/alloc", taskDir: "/r/web" };
  const problems = (taskPath: string) =>
    v.safeParse(IsolationSpecSchema, isolationSpec(layout, { volumes: [{ taskPath, hostPath: "/srv", readOnly: false }] })).issues?.map((issue) => issue.message) ?? [];
  expect(problems("/")).toEqual(["must not be the task's root"]);
  expect(problems("/local")).toEqual(["must not be /local itself (a path below it is fine)"]);
  expect(problems("/proc/sys")).toEqual(["must not be on or under /proc"]);
  expect(problems("/secrets/x")).toEqual(["must not be on or under /secrets"]);
  expect(problems("/srv/../etc")[0]).toStartWith("must be an absolute path without");
  expect(problems("/local/data")).toEqual([]);
  expect(problems("/srv/data")).toEqual([]);
});
