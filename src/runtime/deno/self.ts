/**
 * runtime/self.ts on Deno: `deno run -A src/main.ts <role>`. -A because
 * drover calls libc through FFI, which Deno grants only with every permission
 * anyway. The config is named so a role finds the import map whatever its
 * working directory.
 */
import { selfProgram } from "../program.ts";
import type { SelfArgv } from "../self.ts";

const MAIN_SCRIPT = new URL("../../main.ts", import.meta.url).pathname;
const CONFIG = new URL("../../../deno.jsonc", import.meta.url).pathname;

export const selfArgv: SelfArgv = (args) => [selfProgram(), "run", "-A", `--config=${CONFIG}`, MAIN_SCRIPT, ...args];
