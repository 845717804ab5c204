/**
 * What the runners keep beyond the state the API shows, so a restarted agent
 * carries on exactly where the last one stopped. The shapes are defined here,
 * where they are stored, and checked when they are read back.
 */
import * as v from "valibot";
import { ExitResultSchema } from "../../structs/exit-result.ts";

/** A hook's own notes (Nomad's hook data): given back to the hook when its runner is restored. */
export const HookDataSchema = v.record(v.string(), v.string());
export type HookData = v.InferOutput<typeof HookDataSchema>;

/** An alloc's health as the client decided it, for one deployment ("" when the alloc is in none). */
export const AllocHealthSchema = v.object({
  deploymentId: v.string(),
  healthy: v.boolean(),
  /** RFC 3339: when it was decided. */
  timestamp: v.string(),
});
export type AllocHealth = v.InferOutput<typeof AllocHealthSchema>;

/** Per-hook progress of an alloc, and its health once decided (so a restart does not judge it again). */
export const AllocLocalStateSchema = v.object({
  hooks: v.record(v.string(), v.object({ done: v.boolean() })),
  health: v.optional(AllocHealthSchema),
  /** The network hook's record of the alloc's bridge network (client/network/bridge.ts checks it), so a restarted agent tears it down. */
  network: v.optional(v.unknown()),
});
export type AllocLocalState = v.InferOutput<typeof AllocLocalStateSchema>;

/** The restart policy's count in its current interval (Nomad's restart tracker), so an agent restart neither resets nor repeats it. */
export const RestartCountSchema = v.object({
  count: v.pipe(v.number(), v.integer(), v.minValue(0)),
  /** Milliseconds since the epoch. */
  intervalStart: v.number(),
});
export type RestartCount = v.InferOutput<typeof RestartCountSchema>;

/** Per-hook progress of a task, whether a kill was under way, how the task last ended, and a restart already decided. */
export const TaskLocalStateSchema = v.object({
  hooks: v.record(v.string(), v.object({ done: v.boolean(), data: v.optional(HookDataSchema) })),
  /** The kill reason, saved before the kill is acted on: a restored runner finishes it. */
  killReason: v.optional(v.string()),
  /** Saved before the driver's handle is forgotten: a restored runner decides from it. */
  lastExit: v.optional(ExitResultSchema),
  restarts: v.optional(RestartCountSchema),
  /** A restart was decided and recorded: the task starts again at this time (ms since the epoch), without deciding again. */
  restartAt: v.optional(v.number()),
});
export type TaskLocalState = v.InferOutput<typeof TaskLocalStateSchema>;
