/**
 * Nodes (Nomad's Node endpoint): the client registers its node and reports
 * its status; the API lists nodes and their allocs. Room a node adds is
 * offered to the evaluations waiting for it.
 */
import { parseOrThrow } from "../../lib/validation.ts";
import type { Allocation } from "../../structs/alloc.ts";
import { NodeRegistrationSchema, type Node, type NodeListStub, type NodeRegistration, type NodeStatus } from "../../structs/node.ts";
import { VERSION } from "../../lib/version.ts";
import { notFound } from "../errors.ts";
import { retryBlocked } from "../scheduler/evaluate.ts";
import { byPrefix, type EndpointContext } from "./context.ts";

export class NodeEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  list(prefix?: string): NodeListStub[] {
    return byPrefix(this.ctx.store.read.nodes.values(), prefix).map((node) => ({
      Address: node.HTTPAddr.replace(/:\d+$/, ""),
      ID: node.ID,
      Datacenter: node.Datacenter,
      Name: node.Name,
      NodeClass: node.NodeClass,
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

  /** Registers the node, or updates it (same ID) after a restart or a fingerprint change. */
  upsert(registration: NodeRegistration): { Index: number } {
    const node = parseOrThrow(NodeRegistrationSchema, registration, "node registration");
    return this.ctx.store.write((txn) => {
      const existing = txn.nodes.get(node.ID);
      txn.nodes.put(node.ID, {
        ...node,
        Drain: existing?.Drain ?? false,
        StatusUpdatedAt: existing?.Status === node.Status ? existing.StatusUpdatedAt : Math.floor(txn.now / 1e9),
        CreateIndex: existing?.CreateIndex ?? txn.index,
        ModifyIndex: txn.index,
      });
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
      if (status === "ready") retryBlocked(txn, this.ctx.scheduler);
      return { Index: txn.index };
    });
  }
}
