/** runtime/detect.ts on Deno: always `deno run` (drover is not built with `deno compile`). */
import type { RuntimeName } from "../detect.ts";

export const runtimeName: RuntimeName = "deno";

/** "deno 2.9.6". */
export const runtimeVersion = `deno ${Deno.version.deno}`;

export const isCompiled = false;
