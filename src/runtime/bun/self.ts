/** runtime/self.ts on Bun: the compiled binary runs itself; in development Bun runs src/main.ts. */
import { isCompiled } from "./detect.ts";
import { selfProgram } from "../program.ts";
import type { SelfArgv } from "../self.ts";

// A URL rather than node:path: every role loads this module, and node:path costs each process ~0.1 MiB.
const MAIN_SCRIPT = new URL("../../main.ts", import.meta.url).pathname;

export const selfArgv: SelfArgv = (args) => (isCompiled ? [selfProgram(), ...args] : [selfProgram(), MAIN_SCRIPT, ...args]);
