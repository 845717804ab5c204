/**
 * What an alloc dir's disk use counts: its own files, never what is mounted
 * below it, a host volume bound from the same file system included.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bindBeneath, unbindBeneath } from "../../src/runtime/mounts.ts";
import { dirUsage } from "../../src/stats/dir-usage.ts";
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
