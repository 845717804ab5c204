/**
 * Which JavaScript runtime and packaging this process runs under. Everything
 * outside src/runtime/ asks here instead of probing globals itself.
 */
export { isCompiled, runtimeName, runtimeVersion } from "@drover/runtime/detect.ts";

export type RuntimeName = "bun" | "deno";
