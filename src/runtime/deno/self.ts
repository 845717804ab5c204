/**
 * runtime/self.ts on Deno: `deno run -A [--v8-flags=...] src/main.ts <role>`.
 * -A because drover calls libc through FFI, which Deno grants only with every
 * permission anyway. The config is named so a role finds the import map
 * whatever its working directory.
 */
import type { SelfArgv } from "../self.ts";

const MAIN_SCRIPT = new URL("../../main.ts", import.meta.url).pathname;
const CONFIG = new URL("../../../deno.jsonc", import.meta.url).pathname;

/**
 * V8 settings for a role that idles almost all its life and exists once per
 * task (the executor): no concurrent compiler or GC threads, and no
 * optimizing tiers. V8 reads them only at start, hence on the command line.
 */
const IDLE_V8_FLAGS = "--v8-flags=--single-threaded,--lite-mode";

export const selfArgv: SelfArgv = (args, options) => [
  Deno.execPath(),
  "run",
  "-A",
  `--config=${CONFIG}`,
  ...(options?.idle ? [IDLE_V8_FLAGS] : []),
  MAIN_SCRIPT,
  ...args,
];

/** Deno takes its engine settings on the command line (above), not from the environment. */
export const IDLE_ROLE_ENGINE_ENV: Readonly<Record<string, string>> = {};
