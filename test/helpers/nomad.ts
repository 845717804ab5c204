/**
 * The real Nomad 0.12.12 CLI, from the shared folder beside the checkout
 * (../shared/nomad from /work/main; found by walking up from the repo), for
 * tests that point Nomad's own tools at a drover agent. Where it is absent
 * the tests skip, printing why.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { REPO } from "./binary.ts";
import type { CliResult } from "./agent.ts";
import { waitFor } from "./index.ts";

function sharedNomadDir(): string | null {
  for (let dir = REPO; ; dir = dirname(dir)) {
    const candidate = join(dir, "shared", "nomad");
    if (existsSync(join(candidate, "unpack"))) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

function unpack(): { binary: string } | { reason: string } {
  const dir = sharedNomadDir();
  if (!dir) return { reason: `no shared/nomad folder above ${REPO} (the real Nomad CLI these tests drive)` };
  const run = Bun.spawnSync(["sh", join(dir, "unpack")], { stdout: "pipe", stderr: "pipe" });
  const binary = run.stdout.toString().trim();
  if (run.exitCode !== 0 || !binary) return { reason: `${dir}/unpack failed: ${run.stderr.toString().trim()}` };
  return { binary };
}

const found = unpack();

/** The Nomad binary's path, or null (with `nomadMissing` saying why). */
export const NOMAD_BINARY: string | null = "binary" in found ? found.binary : null;
export const nomadMissing: string = "reason" in found ? found.reason : "";
if (!NOMAD_BINARY) console.warn(`skipping the Nomad CLI tests: ${nomadMissing}`);

/** Runs `nomad <args>` against the agent at `address`; never prompts, never colours. */
export function nomad(address: string, ...args: string[]): Promise<CliResult> {
  return nomadWith({}, address, ...args);
}

/** `nomad` with more of its environment set: NOMAD_TOKEN, NOMAD_CACERT, NOMAD_CLIENT_CERT, ... */
export async function nomadWith(extraEnv: Record<string, string>, address: string, ...args: string[]): Promise<CliResult> {
  if (!NOMAD_BINARY) throw new Error(nomadMissing);
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", NOMAD_ADDR: address, NOMAD_CLI_NO_COLOR: "1", ...extraEnv };
  const child = spawnProcess({ argv: [NOMAD_BINARY, ...args], env, stdout: "pipe", stderr: "pipe" });
  const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code: status.exitCode, stdout, stderr };
}

/** The value of `key` in Nomad's "Key = value" output, or undefined. */
export function field(output: string, key: string): string | undefined {
  const line = output.split("\n").find((candidate) => new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s+= `).test(candidate));
  return line?.slice(line.indexOf("= ") + 2).trim();
}

/** The rows of the table under `heading` (up to the next blank line), each split on runs of spaces. */
export function table(output: string, heading: string): string[][] {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") break;
    rows.push(line.trim().split(/\s{2,}/));
  }
  return rows;
}

/**
 * Runs a streaming `nomad <args>` (logs -f, fs -f, monitor) until what it
 * printed satisfies `done`, calling `poke` before each look (to make the
 * agent produce what is awaited); then ends it and returns the output.
 */
export async function nomadUntil(address: string, args: string[], done: (seen: string) => boolean, poke: () => unknown = () => {}): Promise<string> {
  if (!NOMAD_BINARY) throw new Error(nomadMissing);
  const child = spawnProcess({
    argv: [NOMAD_BINARY, ...args],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", NOMAD_ADDR: address },
    stdout: "pipe",
    stderr: "pipe",
  });
  let seen = "";
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const reading = (async () => {
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) return;
      seen += decoder.decode(value, { stream: true });
    }
  })();
  try {
    await waitFor(`the output of nomad ${args.join(" ")}`, async () => {
      await poke();
      return done(seen);
    });
    return seen;
  } finally {
    child.kill("SIGKILL");
    await reading.catch(() => undefined);
  }
}
