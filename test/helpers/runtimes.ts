/**
 * The ways drover runs, for end-to-end tests that run once per runtime: the
 * compiled Bun binary, and the source under Deno (`deno run -A src/main.ts`).
 * `argv` is the command that stands for `drover`; the CLI and the agent both
 * run through it.
 *
 * DROVER_RUNTIMES=bun (or deno) limits a test or benchmark run to one.
 */
import { join } from "node:path";
import { ensureBinary, REPO } from "./binary.ts";

export interface DroverRuntime {
  /** "bun" or "deno", for test names. */
  readonly name: string;
  /** argv that runs `drover`: append the command and its arguments. */
  readonly argv: readonly string[];
}

export const DENO = join(REPO, "node_modules", ".bin", "deno");

/** `deno run -A src/main.ts`, as the README documents it (the config named, so any cwd works). */
export const DENO_DROVER: readonly string[] = [DENO, "run", "-A", `--config=${join(REPO, "deno.jsonc")}`, join(REPO, "src", "main.ts")];

const RUNTIMES: Readonly<Record<string, () => DroverRuntime>> = {
  bun: () => ({ name: "bun", argv: [ensureBinary()] }),
  deno: () => ({ name: "deno", argv: DENO_DROVER }),
};

/** One runtime by name. */
export function droverRuntime(name: "bun" | "deno"): DroverRuntime {
  return RUNTIMES[name]!();
}

/** Every runtime the end-to-end tests run under (all unless DROVER_RUNTIMES narrows it). */
export function droverRuntimes(): DroverRuntime[] {
  const wanted = process.env.DROVER_RUNTIMES?.split(",").filter(Boolean) ?? Object.keys(RUNTIMES);
  const unknown = wanted.filter((name) => !RUNTIMES[name]);
  if (unknown.length > 0) throw new Error(`DROVER_RUNTIMES: unknown runtime(s) ${unknown.join(", ")} (have: ${Object.keys(RUNTIMES).join(", ")})`);
  return wanted.map((name) => RUNTIMES[name]!());
}
