/**
 * Nodes (Nomad's Node endpoint): the client registers its node and reports
 * its status; operators drain it and set its eligibility; the API lists
 * nodes and their allocs. Room a node adds is offered to the evaluations
 * waiting for it.
 *
 * A node's SchedulingEligibility, drain and events belong to the server: a
 * client re-registering (after a restart) keeps them.
 */
import { parseOrThrow } from "../../lib/validation.ts";
import { VERSION } from "../../lib/version.ts";
import type { Allocation } from "../../structs/alloc.ts";
import type { NodeDrainRequest, NodeUpdateResponse } from "../../structs/api.ts";
import {
  apiNode,
  NodeRegistrationSchema,
  type ApiNode,
  type Node,
  type NodeListStub,
  type NodeRegistration,
  type NodeStatus,
  type NodeStubFields,
} from "../../structs/node.ts";
import { advanceDrains } from "../drain/drainer.ts";
import { withNodeEvent } from "../drain/node-events.ts";
import { invalid, notFound } from "../errors.ts";
import { evaluate, evaluateSystemJobs, retryBlocked, systemJobs } from "../scheduler/evaluate.ts";
import type { WriteTxn } from "../state/store.ts";
import { byPrefix, type EndpointContext } from "./context.ts";
import { ensureNodePool } from "./node-pool.ts";

/** Nomad's node event messages. */
export const NODE_EVENT = {
  registered: "Node registered",
  drainSet: "Node drain strategy set",
  drainUpdated: "Node drain strategy updated",
  drainDisabled: "Node drain disabled",
  eligible: "Node marked as eligible for scheduling",
  ineligible: "Node marked as ineligible for scheduling",
} as const;

const resourcesOf = (node: ApiNode) => ({ NodeResources: node.NodeResources, ReservedResources: node.ReservedResources });

export class NodeEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  list(prefix?: string, fields: NodeStubFields = { os: false, resources: false }): NodeListStub[] {
    return byPrefix(this.ctx.store.read.nodes.values(), prefix).map((node) => ({
      ...(fields.os ? { Attributes: { "os.name": node.Attributes["os.name"] ?? "" } } : {}),
      ...(fields.resources ? resourcesOf(apiNode(node)) : {}),
      Address: node.HTTPAddr.replace(/:\d+$/, ""),
      ID: node.ID,
      Datacenter: node.Datacenter,
      Name: node.Name,
      NodeClass: node.NodeClass,
      NodePool: node.NodePool,
      Version: node.Attributes["drover.version"] ?? VERSION,
      Drain: node.Drain,
      SchedulingEligibility: node.SchedulingEligibility,
      Status: node.Status,
      StatusDescription: node.StatusDescription,
      Drivers: node.Drivers,
      CreateIndex: node.CreateIndex,
      ModifyIndex: node.ModifyIndex,
    }));
  }

  get(id: string): Node {
    const node = this.ctx.store.read.nodes.get(id);
    if (!node) throw notFound(`node "${id}"`);
    return node;
  }

  /** Every alloc the server has for the node, each with its job version, oldest first. */
  allocations(nodeId: string): Allocation[] {
    return [...this.ctx.store.read.allocs.values()].filter((alloc) => alloc.NodeID === nodeId).sort((a, b) => a.CreateIndex - b.CreateIndex);
  }

  /** The node's allocs in memory: all but those of finished jobs (the in-process client's watch, NodeAllocs.stillKept). */
  liveAllocations(nodeId: string): Allocation[] {
    return [...this.ctx.store.read.allocs.hotValues()].filter((alloc) => alloc.NodeID === nodeId).sort((a, b) => a.CreateIndex - b.CreateIndex);
  }

  /** Registers the node, or updates it (same ID) after a restart or a fingerprint change. */
  upsert(registration: NodeRegistration): { Index: number } {
    const node = parseOrThrow(NodeRegistrationSchema, registration, "node registration");
    return this.ctx.store.write((txn) => {
      const existing = txn.nodes.get(node.ID);
      const updated: Node = {
        ...node,
        SchedulingEligibility: existing?.SchedulingEligibility ?? node.SchedulingEligibility,
        Drain: existing?.Drain ?? false,
        DrainStrategy: existing?.DrainStrategy ?? null,
        Events: existing?.Events ?? [],
        StatusUpdatedAt: existing?.Status === node.Status ? existing.StatusUpdatedAt : Math.floor(txn.now / 1e9),
        CreateIndex: existing?.CreateIndex ?? txn.index,
        ModifyIndex: txn.index,
      };
      ensureNodePool(txn, updated.NodePool);
      txn.nodes.put(node.ID, existing ? updated : withNodeEvent(txn, updated, "Cluster", NODE_EVENT.registered));
      // A new node, or one ready again, is where every system job belongs (Nomad's createNodeEvals).
      if (!existing || existing.Status !== updated.Status) evaluateSystemJobs(txn, this.ctx.scheduler, "node-update");
      retryBlocked(txn, this.ctx.scheduler);
      return { Index: txn.index };
    });
  }

  updateStatus(nodeId: string, status: NodeStatus, description = ""): { Index: number } {
    return this.ctx.store.write((txn) => {
      const node = txn.nodes.get(nodeId);
      if (!node) throw notFound(`node "${nodeId}"`);
      if (node.Status === status && node.StatusDescription === description) return { Index: this.ctx.store.index };
      txn.nodes.put(nodeId, { ...node, Status: status, StatusDescription: description, StatusUpdatedAt: Math.floor(txn.now / 1e9), ModifyIndex: txn.index });
      if (status === "ready") {
        evaluateSystemJobs(txn, this.ctx.scheduler, "node-update");
        retryBlocked(txn, this.ctx.scheduler);
      }
      return { Index: txn.index };
    });
  }

  /**
   * PUT /v1/node/:id/drain: sets, updates or ends the node's drain. A drain
   * makes the node ineligible; ending it with MarkEligible makes it
   * eligible again and places what waited.
   */
  updateDrain(nodeId: string, request: NodeDrainRequest): NodeUpdateResponse {
    return this.ctx.store.write((txn) => {
      const node = txn.nodes.get(nodeId);
      if (!node) throw notFound(`node "${nodeId}"`);
      const spec = request.DrainSpec;
      let updated: Node;
      if (spec) {
        const now = new Date(Math.floor(txn.now / 1e6));
        updated = withNodeEvent(
          txn,
          {
            ...node,
            Drain: true,
            SchedulingEligibility: "ineligible",
            DrainStrategy: {
              Deadline: spec.Deadline,
              IgnoreSystemJobs: spec.IgnoreSystemJobs,
              ForceDeadline: spec.Deadline > 0 ? new Date(now.getTime() + Math.floor(spec.Deadline / 1e6)).toISOString() : null,
              StartedAt: node.DrainStrategy?.StartedAt ?? now.toISOString(),
            },
          },
          "Drain",
          node.DrainStrategy ? NODE_EVENT.drainUpdated : NODE_EVENT.drainSet,
        );
      } else {
        const eligible = request.MarkEligible ? "eligible" : node.SchedulingEligibility;
        updated = { ...node, Drain: false, DrainStrategy: null, SchedulingEligibility: eligible, ModifyIndex: txn.index };
        if (node.DrainStrategy) updated = withNodeEvent(txn, updated, "Drain", NODE_EVENT.drainDisabled);
      }
      txn.nodes.put(nodeId, updated);
      const evalIds = this.afterEligibilityChange(txn, node, updated);
      advanceDrains(txn, this.ctx.scheduler);
      return { NodeModifyIndex: txn.index, EvalIDs: evalIds, EvalCreateIndex: evalIds.length > 0 ? txn.index : 0, Index: txn.index };
    });
  }

  /** PUT /v1/node/:id/eligibility. A draining node cannot be made eligible (Nomad's rule). */
  updateEligibility(nodeId: string, eligibility: Node["SchedulingEligibility"]): NodeUpdateResponse {
    return this.ctx.store.write((txn) => {
      const node = txn.nodes.get(nodeId);
      if (!node) throw notFound(`node "${nodeId}"`);
      if (node.DrainStrategy && eligibility === "eligible") throw invalid("can not set node's scheduling eligibility to eligible while it is draining");
      if (node.SchedulingEligibility === eligibility) return { NodeModifyIndex: node.ModifyIndex, EvalIDs: [], EvalCreateIndex: 0, Index: this.ctx.store.index };
      const updated = withNodeEvent(
        txn,
        { ...node, SchedulingEligibility: eligibility },
        "Cluster",
        eligibility === "eligible" ? NODE_EVENT.eligible : NODE_EVENT.ineligible,
      );
      txn.nodes.put(nodeId, updated);
      const evalIds = this.afterEligibilityChange(txn, node, updated);
      return { NodeModifyIndex: txn.index, EvalIDs: evalIds, EvalCreateIndex: evalIds.length > 0 ? txn.index : 0, Index: txn.index };
    });
  }

  /** PUT /v1/node/:id/evaluate: evaluates every job with an alloc on the node, and what waits for room. */
  evaluate(nodeId: string): NodeUpdateResponse {
    return this.ctx.store.write((txn) => {
      const node = txn.nodes.get(nodeId);
      if (!node) throw notFound(`node "${nodeId}"`);
      const evalIds = this.evaluateNodeJobs(txn, nodeId);
      return { NodeModifyIndex: node.ModifyIndex, EvalIDs: evalIds, EvalCreateIndex: txn.index, Index: txn.index };
    });
  }

  /** A node that became eligible: its jobs are evaluated and what waited for room is placed. */
  private afterEligibilityChange(txn: WriteTxn, before: Node, after: Node): string[] {
    if (before.SchedulingEligibility === "eligible" || after.SchedulingEligibility !== "eligible") return [];
    const evalIds = this.evaluateNodeJobs(txn, after.ID);
    retryBlocked(txn, this.ctx.scheduler);
    return evalIds;
  }

  /** Every job with an alloc on the node, and every system and sysbatch job (they belong on every node). */
  private evaluateNodeJobs(txn: WriteTxn, nodeId: string): string[] {
    // Finished jobs too (their allocs only in SQLite), as Nomad evaluates every job with an alloc on the node.
    const onNode = [...txn.allocs.allValues()].filter((alloc) => alloc.NodeID === nodeId);
    const jobs = new Set(onNode.filter((alloc) => txn.jobs.get(alloc.JobID) !== undefined).map((alloc) => alloc.JobID));
    for (const job of systemJobs(txn)) jobs.add(job.ID);
    return [...jobs].sort().map((jobId) => evaluate(txn, this.ctx.scheduler, jobId, "node-update").ID);
  }
}
