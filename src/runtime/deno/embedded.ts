/** runtime/embedded.ts on Deno: nothing is embedded; the installed packages' files are read in place. */
import type { EmbeddedPath } from "../embedded.ts";

export const hclWasmGzPath: EmbeddedPath = undefined;
