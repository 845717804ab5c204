/**
 * The real Nomad 0.12.12 CLI, a peer for tests that point Nomad's own tools at
 * drover. It comes from a `shared/nomad` directory beside the checkout (or
 * beside one of its parents: /work/shared/nomad for /work/main and for the
 * worktrees under /work/wt), whose `unpack` script prints the binary's path.
 * Where there is none, `nomadCli` says why, and tests skip printing that.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO } from "./binary.ts";

export type NomadCli = { path: string } | { missing: string };

function findUnpack(): string | null {
  for (let dir = dirname(REPO); ; dir = dirname(dir)) {
    const unpack = join(dir, "shared", "nomad", "unpack");
    if (existsSync(unpack)) return unpack;
    if (dir === dirname(dir)) return null;
  }
}

function locate(): NomadCli {
  const unpack = findUnpack();
  if (!unpack) return { missing: `no shared/nomad beside ${REPO} or its parents` };
  const result = Bun.spawnSync([unpack], { stdout: "pipe", stderr: "pipe" });
  const path = result.stdout.toString().trim();
  if (result.exitCode !== 0 || !path) return { missing: `${unpack} failed: ${result.stderr.toString().trim() || `exit ${result.exitCode}`}` };
  return { path };
}

/** The Nomad CLI's path, or why there is none; looked up once per test file. */
export const nomadCli: NomadCli = locate();
