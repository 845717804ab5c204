import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dirUsage, WALK_SLICE_ENTRIES } from "../../src/stats/dir-usage.ts";
import { tempDir } from "../helpers/index.ts";

describe("dirUsage", () => {
  test("counts every file's blocks across slices of the walk, without following links", async () => {
    const root = join(tempDir(), "alloc");
    mkdirSync(join(root, "a", "b"), { recursive: true });
    const files = WALK_SLICE_ENTRIES * 2 + 7;
    for (let i = 0; i < files; i++) writeFileSync(join(root, "a", "b", `f${i}`), "x".repeat(100));
    writeFileSync(join(root, "big"), Buffer.alloc(1 << 20, 1));
    symlinkSync("/usr", join(root, "link"));
    const usage = await dirUsage(root, 100_000);
    // a, a/b, the files, big, link
    expect(usage.entries).toBe(2 + files + 2);
    expect(usage.truncated).toBe(false);
    expect(usage.bytes).toBeGreaterThanOrEqual((1 << 20) + files * 512);
    expect(usage.bytes).toBeLessThan(100 * (1 << 20));
  });

  test("stops at maxEntries and says so; a missing root is empty", async () => {
    const root = tempDir();
    for (let i = 0; i < 50; i++) writeFileSync(join(root, `f${i}`), "x");
    expect(await dirUsage(root, 10)).toMatchObject({ entries: 10, truncated: true });
    expect(await dirUsage(join(root, "missing"), 10)).toEqual({ bytes: 0, entries: 0, truncated: false });
  });
});
