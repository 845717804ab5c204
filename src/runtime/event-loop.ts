/**
 * The runtime's event-loop: the contract both halves implement (contract/event-loop.ts, which
 * they import, so no import cycle carries a value) and this runtime's half.
 */
export * from "./contract/event-loop.ts";
export { newReadinessWaiter } from "@drover/runtime/event-loop.ts";
