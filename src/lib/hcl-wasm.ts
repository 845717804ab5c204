/**
 * Where the HCL parser (hcl-parser.ts) reads HashiCorp's WASM module from.
 * The runtime knows where it carries the file (runtime/embedded.ts: inside
 * the compiled executable), which lib may not import, so main.ts says so here
 * at start; otherwise (running from a checkout, tests that parse directly) it
 * is the installed package's copy.
 */
import { createRequire } from "node:module";

let path: string | undefined;

export function useHclWasm(at: string): void {
  path = at;
}

export function hclWasmPath(): string {
  path ??= createRequire(import.meta.url).resolve("@cdktf/hcl2json/main.wasm.gz");
  return path;
}
