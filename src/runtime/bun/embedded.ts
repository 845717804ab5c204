/** runtime/embedded.ts on Bun: an import `with { type: "file" }` embeds the file in the compiled executable. */
import path from "@cdktf/hcl2json/main.wasm.gz" with { type: "file" };
import type { EmbeddedPath } from "../embedded.ts";

export const hclWasmGzPath: EmbeddedPath = path;
