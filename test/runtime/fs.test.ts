import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { writeFileAtomic, writeFileReplacing, writeFilesAtomic } from "../../src/runtime/fs.ts";
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

  test("a temporary name an earlier process of the same pid left is taken over", () => {
    const dir = tempDir("drover-fs-stale-");
    const path = join(dir, "spec.json");
    writeFileSync(`${path}.tmp-${process.pid}`, "left by a killed writer");
    write(path, "{}", 0o600);
    expect(readFileSync(path, "utf8")).toBe("{}");
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

test("writeFilesAtomic writes each file whole, answers the error of one that fails, and leaves no temporary file", () => {
  const dir = tempDir("drover-fs-many-");
  writeFileSync(join(dir, "b.json"), "old b, longer than the new");
  const errors = writeFilesAtomic([
    { path: join(dir, "a.json"), data: "a" },
    { path: join(dir, "missing", "x.json"), data: "x" },
    { path: join(dir, "b.json"), data: "b", mode: 0o600 },
  ]);
  expect(errors[0]).toBeNull();
  expect(errors[1]?.message).toMatch(/ENOENT/);
  expect(errors[2]).toBeNull();
  expect(readFileSync(join(dir, "a.json"), "utf8")).toBe("a");
  expect(readFileSync(join(dir, "b.json"), "utf8")).toBe("b");
  expect(statSync(join(dir, "b.json")).mode & 0o777).toBe(0o600);
  expect(readdirSync(dir).sort()).toEqual(["a.json", "b.json"]);
});

test("a writer killed while it writes leaves the old or the new file whole, and no temporary file", async () => {
  const dir = tempDir("drover-fs-killed-");
  const path = join(dir, "state.json");
  const size = 8 * 1024 * 1024;
  const script = join(dir, "writer.ts");
  writeFileSync(
    script,
    `import { writeFileAtomic } from ${JSON.stringify(join(import.meta.dir, "../../src/runtime/fs.ts"))};
const contents = [new Uint8Array(${size}).fill(1), new Uint8Array(${size}).fill(2)];
for (let round = 1; ; round++) {
  writeFileAtomic(${JSON.stringify(path)}, contents[round % 2]);
  console.log(round);
}
`,
  );
  const writer = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "inherit" });
  // Killed mid-loop, after a few whole writes: almost all of a round is the write and its fsync.
  const reader = writer.stdout.getReader();
  let seen = "";
  while (!seen.includes("3\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the writer ended early: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  writer.kill("SIGKILL");
  await writer.exited;
  const names = readdirSync(dir).filter((name) => name !== "writer.ts");
  expect(names).toEqual(["state.json"]);
  const bytes = readFileSync(path);
  expect(bytes.length).toBe(size);
  expect(bytes.every((byte) => byte === bytes[0])).toBe(true);
});
