/**
 * The runtime's serve: the contract both halves implement (contract/serve.ts, which
 * they import, so no import cycle carries a value) and this runtime's half.
 */
export * from "./contract/serve.ts";
export { serveHttp, serveHttpUnix } from "@drover/runtime/serve.ts";
