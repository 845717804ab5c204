/**
 * The compiled binary for end-to-end tests. `npm test` builds it first
 * (pretest); a direct `bun test` rebuilds it when any source is newer.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");
export const DIST = join(REPO, "dist");
export const BINARY = join(DIST, "drover");

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export function ensureBinary(): string {
  const stale =
    !existsSync(BINARY) ||
    statSync(BINARY).mtimeMs < Math.max(newestSource(join(REPO, "src")), statSync(join(REPO, "build.ts")).mtimeMs);
  if (stale) {
    const build = Bun.spawnSync([process.execPath, join(REPO, "build.ts")], { cwd: REPO, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("building dist/drover failed");
  }
  return BINARY;
}
