import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { writeFileAtomic, writeFileReplacing } from "../../src/runtime/fs.ts";
import { tempDir } from "../helpers/index.ts";

describe.each([
  ["writeFileAtomic", writeFileAtomic],
  ["writeFileReplacing", writeFileReplacing],
] as const)("%s", (_name, write) => {
  test("replaces the file whole, with the mode asked, and leaves no temporary file", () => {
    const dir = tempDir("drover-fs-");
    const path = join(dir, "spec.json");
    writeFileSync(path, "old content, longer than the new");
    write(path, "{}", 0o600);
    expect(readFileSync(path, "utf8")).toBe("{}");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["spec.json"]);
  });

  test.skipIf(process.getuid?.() !== 0)("on a full disk it throws, and leaves the old file and no temporary file", () => {
    const dir = join(tempDir("drover-fs-full-"), "small");
    mkdirSync(dir);
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]).status).toBe(0);
    try {
      const path = join(dir, "spec.json");
      writeFileSync(path, "old");
      expect(() => write(path, new Uint8Array(256 * 1024), 0o600)).toThrow(/ENOSPC|No space/);
      expect(readFileSync(path, "utf8")).toBe("old");
      expect(readdirSync(dir)).toEqual(["spec.json"]);
    } finally {
      spawnSync("umount", [dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
