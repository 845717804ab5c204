/**
 * What an alloc dir's disk use counts: its own files, never what is mounted
 * below it, a host volume bound from the same file system included.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bindBeneath, unbindBeneath } from "../../src/runtime/mounts.ts";
import { DirListings, dirUsage, WALK_SLICE_ENTRIES } from "../../src/stats/dir-usage.ts";
import { capabilities, tempDir } from "../helpers/index.ts";

const MIB = 2 ** 20;

test("counts the files of the tree, links not followed", async () => {
  const root = tempDir("drover-du-");
  mkdirSync(join(root, "a"));
  writeFileSync(join(root, "a", "one"), new Uint8Array(MIB));
  const usage = await dirUsage(root, 1000);
  expect(usage.bytes).toBeGreaterThanOrEqual(MIB);
  expect(usage.bytes).toBeLessThan(2 * MIB);
  expect(usage).toMatchObject({ entries: 2, truncated: false });
});

test.skipIf(!capabilities.root)(`skips a bind mounted below it from the same file system (a host volume)${capabilities.root ? "" : " (skipped: needs root to mount)"}`, async () => {
  const dir = tempDir("drover-du-bind-");
  const volume = join(dir, "volume");
  mkdirSync(volume);
  writeFileSync(join(volume, "big"), new Uint8Array(8 * MIB));
  const allocDir = join(dir, "alloc");
  mkdirSync(join(allocDir, "task"), { recursive: true });
  writeFileSync(join(allocDir, "task", "own"), new Uint8Array(MIB));
  bindBeneath(volume, join(allocDir, "task"), "srv/data", { readOnly: true });
  try {
    const usage = await dirUsage(allocDir, 1000);
    expect(usage.bytes).toBeLessThan(2 * MIB);
  } finally {
    unbindBeneath(join(allocDir, "task"), "srv/data");
  }
});

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

describe("listings kept between walks", () => {
  test("a directory whose mtime has not moved is not listed again; files that grew and new entries still count", async () => {
    const root = join(tempDir(), "alloc");
    mkdirSync(join(root, "logs"), { recursive: true });
    writeFileSync(join(root, "logs", "a"), "x");
    const listings = new DirListings();
    const first = await dirUsage(root, 1000, listings);
    expect(first.entries).toBe(2);

    // A file that grows is looked at on every walk.
    writeFileSync(join(root, "logs", "a"), new Uint8Array(MIB));
    expect((await dirUsage(root, 1000, listings)).bytes).toBeGreaterThanOrEqual(MIB);

    // A new entry moves the directory's mtime: listed again.
    writeFileSync(join(root, "logs", "b"), new Uint8Array(MIB));
    expect((await dirUsage(root, 1000, listings)).entries).toBe(3);

    // With the mtime put back, the kept listing is used: the walk does not see "c".
    const logs = join(root, "logs");
    utimesSync(logs, 1000, 1000);
    expect((await dirUsage(root, 1000, listings)).entries).toBe(3);
    writeFileSync(join(logs, "c"), "x");
    utimesSync(logs, 1000, 1000);
    expect((await dirUsage(root, 1000, listings)).entries).toBe(3);
    expect((await dirUsage(root, 1000)).entries).toBe(4);
  });
});
