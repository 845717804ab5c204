/**
 * cgroups for tests that run real tasks: a parent of the test file's own,
 * so nothing collides with a real agent's "drover" parent or another test
 * file, killed and removed (with anything left in it) after the file.
 */
import { afterAll } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readProcs, removeDir } from "../../src/cgroups/files.ts";
import { parentCgroupDirs } from "../../src/cgroups/paths.ts";
import { capabilities, killPids, sleep } from "./index.ts";

/** Real cgroups need root and a v1 or v2 memory controller. */
export const canUseCgroups = capabilities.root && capabilities.cgroups.mode !== "none";

/** A cgroup parent used by this test file only; whatever is left below it is killed and removed afterwards. */
export function testCgroupParent(): string {
  const parent = `drover-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  afterAll(() => removeCgroupParent(parent));
  return parent;
}

/** Kills whatever is left in the cgroups below `parent` and removes them and it (tests' and benches' own parents). */
export async function removeCgroupParent(parent: string): Promise<void> {
  for (const dir of parentCgroupDirs(capabilities.cgroups, parent)) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const child = join(dir, entry.name);
      killPids(readProcs(child));
      for (let i = 0; i < 100 && readProcs(child).length > 0; i++) await sleep(10);
      removeDir(child);
    }
    removeDir(dir);
  }
}
