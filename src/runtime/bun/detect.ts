/** runtime/detect.ts on Bun. */
import type { RuntimeName } from "../detect.ts";

export const runtimeName: RuntimeName = "bun";

/** "bun 1.4.5". */
export const runtimeVersion = `bun ${Bun.version}`;

/**
 * True inside a `bun build --compile` executable: its modules live in the
 * embedded `/$bunfs/` file system.
 */
export const isCompiled = Bun.main.startsWith("/$bunfs/");
