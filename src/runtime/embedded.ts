/**
 * Files drover carries with it, as paths readable with node:fs. The compiled
 * Bun binary embeds them in its executable (bun/embedded.ts); on Deno, which
 * runs from a checkout, nothing is embedded and each is read where npm
 * installed it (undefined here).
 */

/** HashiCorp's HCL parser compiled to WASM, gzipped (for lib/hcl-parser.ts, through lib/hcl-wasm.ts). */
export type EmbeddedPath = string | undefined;

export { hclWasmGzPath } from "@drover/runtime/embedded.ts";
