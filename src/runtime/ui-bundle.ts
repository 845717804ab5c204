/**
 * The runtime's ui-bundle: the contract both halves implement (contract/ui-bundle.ts, which
 * they import, so no import cycle carries a value) and this runtime's half.
 */
export * from "./contract/ui-bundle.ts";
export { uiBundle } from "@drover/runtime/ui-bundle.ts";
