/**
 * What a client needs of its servers: the calls Nomad's client
 * makes over RPC (Node.Register, Node.UpdateStatus, Node.GetClientAllocs,
 * Node.UpdateAlloc, Node.EmitEvents), as promises. Two implementations: the
 * embedded server answers them in process (server/client-endpoint.ts);
 * remote Nomad servers answer them over their RPC port (nomad-servers/endpoint.ts),
 * which also keeps the node's heartbeat.
 *
 *   client start ──> registerNode(node) ──> watchAllocs(node, 0) ──> {index, allocs}
 *        ┌──────────────────────────────────────────────────────────────┘
 *        ▼
 *   run/stop what changed ──> updateAllocs([...]) (as tasks change state)
 *        │
 *        └──> watchAllocs(node, index) ── blocks until the server changes one of
 *             the node's allocs (placed, told to stop, moved to a new job version)
 *             or removes one (GC) ──> {index, allocs} ──> (loop)
 *
 * `allocs` is always every alloc the server holds for the node, each its
 * latest version with the job version it runs; an alloc the client runs
 * that is missing from it was garbage-collected and may be destroyed. An
 * alloc changed when its AllocModifyIndex is above the index the client
 * last acted on; client updates bump ModifyIndex only, so the client's own
 * reports never wake its watch. The allocs are the server's own objects,
 * frozen: copy before changing anything.
 */
import type { AllocClientUpdate } from "./api.ts";
import type { Allocation } from "./alloc.ts";
import type { NodeRegistration, NodeStatus } from "./node.ts";
import type { ServiceRegistration } from "./service-registration.ts";

/** Something that happened to the node (a driver became unhealthy, ...): Nomad's NodeEvent. */
export interface NodeEvent {
  Message: string;
  /** Nomad's subsystems: "Driver", "Cluster", "Drain", ... */
  Subsystem: string;
  Details: Record<string, string>;
  /** Nanoseconds since the epoch. */
  Time: number;
}

export interface NodeAllocs {
  /** Pass back as `minIndex` to wait for the next change. */
  index: number;
  allocs: Allocation[];
  /**
   * The embedded server leaves out allocs of finished jobs (they stay in its
   * database until its GC removes them, unchanged): true for the ID of one
   * it still has, so the client keeps that alloc's dir and runner. Absent:
   * `allocs` is every alloc of the node.
   */
  stillKept?: (allocId: string) => boolean;
}

export interface ClientEndpoint {
  /** Registers the node, or updates it (same ID) after a restart or a fingerprint change. */
  registerNode(node: NodeRegistration): Promise<{ Index: number }>;
  updateNodeStatus(nodeId: string, status: NodeStatus, description?: string): Promise<{ Index: number }>;
  /**
   * Blocks until the node's alloc index passes `minIndex` (at once for 0),
   * then returns every alloc of the node. Rejects with the signal's reason
   * when aborted, with ServerError "unavailable" when the server closes, and
   * with ServerError "not-found" for a node that never registered.
   */
  watchAllocs(nodeId: string, minIndex: number, signal?: AbortSignal): Promise<NodeAllocs>;
  /**
   * The client's reports (ClientStatus, ClientDescription, TaskStates,
   * DeploymentStatus), stored in one transaction. An alloc that finished
   * frees its resources and ports for allocations waiting for room.
   */
  updateAllocs(updates: readonly AllocClientUpdate[]): Promise<{ Index: number }>;
  /** Node events for the server's record of the node (`nomad node status -verbose`). */
  emitNodeEvents(nodeId: string, events: readonly NodeEvent[]): Promise<{ Index: number }>;
  /** Native services of running tasks (Nomad's ServiceRegistration.Upsert and DeleteByID). */
  upsertServices(registrations: readonly Omit<ServiceRegistration, "CreateIndex" | "ModifyIndex">[]): Promise<void>;
  deleteServices(ids: readonly string[]): Promise<void>;
  /** The instances of one service in `namespace` (the task's), for templates (ServiceRegistration.GetService). */
  getService(name: string, namespace: string): Promise<ServiceRegistration[]>;
}
