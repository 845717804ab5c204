/**
 * Alloc runner hooks: named objects with optional phase methods, as the task
 * runner's are.
 *
 *   prerun ──> (task runners) ──> postrun (every task dead) ──> destroy (GC or purge)
 *   update: a new version of the alloc while it runs; shutdown: the agent stops
 *
 * A prerun hook that answers `done` is skipped when the runner is restored.
 */
import type { StopSignal } from "../../../lib/stop-flag.ts";
import type { AllocHealth } from "../../../state/client/local-state.ts";
import type { Allocation } from "../../../structs/alloc.ts";
import type { TaskEvent, TaskState } from "../../../structs/task-state.ts";
import type { AllocDir } from "../../allocdir/alloc-dir.ts";

/**
 * The alloc's health as the runner keeps and reports it (Nomad's healthSetter). Method names of
 * their own, so that the runner itself is the access, not an object of closures per running alloc
 * (issue 35).
 */
export interface AllocHealthAccess {
  healthRecord(): AllocHealth | undefined;
  /** Decides the alloc's health for its current deployment: saved, then reported to the server. */
  recordHealth(healthy: boolean): void;
  /** Forgets a decision (the alloc moved to another deployment). */
  clearHealth(): void;
  /** The tasks' states now. */
  taskStates(): Record<string, TaskState>;
  /** Calls `listener` after every task state change; returns the unsubscribe. */
  onTaskStateChange(listener: () => void): () => void;
}

/** The network hook's saved record (alloc local state), named as AllocHealthAccess is, for the same reason. */
export interface AllocNetworkAccess {
  networkRecord(): unknown;
  recordNetwork(record: unknown): void;
}

export interface AllocHookContext {
  alloc: Allocation;
  allocDir: AllocDir;
  /** Set once the alloc is being stopped or destroyed: a prerun hook that waits gives up. */
  stopping: StopSignal;
  /** Kills every task but the poststop ones, each with its own copy of the event; nothing new starts. */
  killTasks(event: () => TaskEvent): void;
  health: AllocHealthAccess;
  /** The network hook's saved record (alloc local state): saved at once, read back after a restart. */
  network: AllocNetworkAccess;
}

export interface AllocHook {
  readonly name: string;
  prerun?(ctx: AllocHookContext): Promise<{ done?: boolean } | void>;
  postrun?(ctx: AllocHookContext): Promise<void>;
  update?(ctx: AllocHookContext): Promise<void>;
  destroy?(ctx: AllocHookContext): Promise<void>;
  shutdown?(): Promise<void>;
}
