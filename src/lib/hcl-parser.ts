/**
 * HashiCorp's HCL parser, compiled to WASM by @cdktf/hcl2json, started from
 * the bytes compiled into drover's executable.
 *
 *   first parse ──> read the embedded main.wasm.gz ──> gunzip ──> instantiate
 *        ──> run the Go program, which registers parse() ──> ready: every parse is a call
 *   any step fails ──> HclParserError; every later parse fails the same way, at once
 *   the Go program exits ──> pending and later parses fail with HclParserError
 *
 * The package's own bridge (its lib/bridge.js) reads main.wasm.gz from the
 * directory it was installed in, which a compiled binary moved to another
 * host does not have, and waits for the module in a loop that never ends if
 * loading fails. So drover reads the WASM file from where hcl-wasm.ts says
 * (embedded in the compiled executable; running from source, node_modules)
 * and runs the package's Go runtime shim (wasm/bridge_wasm_exec.js) itself.
 * This module is imported only when a file is to be parsed: starting the
 * parser costs about 140 ms.
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import "@cdktf/hcl2json/wasm/bridge_wasm_exec.js";
import { hclWasmPath } from "./hcl-wasm.ts";

/**
 * For tests only: when set (to anything), starting the parser fails as if its
 * embedded module could not be read, so a test can show that every command
 * reading HCL then ends with a one-line error instead of waiting.
 */
export const FAIL_HCL_LOAD_FOR_TESTS = "DROVER_TEST_FAIL_HCL_LOAD";

/** The global the Go program puts its functions on (its name is fixed in the WASM module). */
const EXPORTS_GLOBAL = "__parse_terraform_config_wasm__";

/** The parser could not start, or stopped: an internal error, never the file's fault. */
export class HclParserError extends Error {
  override name = "HclParserError";
}

type Callback = (error: string | null, result: string | null) => void;

interface GoExports {
  parse?: (filename: string, text: string, callback: Callback) => void;
}

/** The Go runtime shim's class (wasm_exec.js), which the import above puts on globalThis. */
interface GoRuntime {
  importObject: Parameters<typeof WebAssembly.instantiate>[1];
  run(instance: WebAssembly.Instance): Promise<void>;
}

/** Parses `text`: the document as JSON text, or rejects with HCL's own diagnostics (a string). */
export type RawParse = (filename: string, text: string) => Promise<string>;

async function start(): Promise<RawParse> {
  if (process.env[FAIL_HCL_LOAD_FOR_TESTS] !== undefined) throw new Error(`${FAIL_HCL_LOAD_FOR_TESTS} is set`);
  const bytes = gunzipSync(readFileSync(hclWasmPath()));
  const Go = (globalThis as { Go?: new () => GoRuntime }).Go;
  if (!Go) throw new Error("the Go WASM runtime shim did not load");
  const go = new Go();
  const exports: GoExports = {};
  (globalThis as Record<string, unknown>)[EXPORTS_GLOBAL] = exports;
  const { instance } = await WebAssembly.instantiate(bytes, go.importObject);
  let stopped: string | undefined;
  const pending = new Set<(error: Error) => void>();
  const stop = (reason: string) => {
    stopped = reason;
    for (const fail of pending) fail(new HclParserError(reason));
    pending.clear();
  };
  go.run(instance).then(
    () => stop("the HCL parser exited"),
    (err: unknown) => stop(`the HCL parser failed: ${err instanceof Error ? err.message : String(err)}`),
  );
  const parse = exports.parse;
  if (typeof parse !== "function") throw new Error("the WASM module registered no parse function");
  return (filename, text) =>
    new Promise<string>((resolve, reject) => {
      if (stopped !== undefined) return reject(new HclParserError(stopped));
      pending.add(reject);
      const settle = (error: string | null, result: string | null) => {
        pending.delete(reject);
        if (error !== null) reject(error);
        else resolve(result ?? "null");
      };
      try {
        parse(filename, text, settle);
      } catch (err) {
        pending.delete(reject);
        reject(new HclParserError(`the HCL parser failed: ${err instanceof Error ? err.message : String(err)}`));
      }
    });
}

let started: Promise<RawParse> | undefined;

/** The parser, started on first use; one start shared by every caller. */
export function hclParser(): Promise<RawParse> {
  started ??= start().catch((err: unknown) => {
    throw new HclParserError(`cannot start the HCL parser: ${err instanceof Error ? err.message : String(err)}`);
  });
  return started;
}
