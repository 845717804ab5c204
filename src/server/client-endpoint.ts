/**
 * The embedded server behind the client's ClientEndpoint
 * (structs/client-endpoint.ts): Nomad's client RPCs as method calls on the
 * same process's server.
 */
import type { ClientEndpoint, NodeAllocs } from "../structs/client-endpoint.ts";
import { ServerError } from "./errors.ts";
import type { Server } from "./server.ts";

export function clientEndpoint(server: Server): ClientEndpoint {
  const snapshot = (nodeId: string): NodeAllocs => ({
    index: server.nodeAllocIndex(nodeId),
    allocs: server.nodes.liveAllocations(nodeId),
    stillKept: (allocId) => server.allocs.exists(allocId),
  });
  const ensureOpen = () => {
    if (server.isClosed) throw new ServerError("unavailable", "the server is shutting down");
  };
  return {
    async registerNode(node) {
      return server.nodes.upsert(node);
    },
    async updateNodeStatus(nodeId, status, description) {
      return server.nodes.updateStatus(nodeId, status, description);
    },
    async watchAllocs(nodeId, minIndex, signal) {
      ensureOpen();
      server.nodes.get(nodeId);
      if (minIndex > 0) await server.waitForNodeAllocs(nodeId, minIndex, signal);
      signal?.throwIfAborted();
      ensureOpen();
      return snapshot(nodeId);
    },
    async updateAllocs(updates) {
      ensureOpen();
      return server.allocs.updateFromClient(updates);
    },
    async emitNodeEvents(nodeId) {
      // The single-node server keeps no event history: the agent's own log has these.
      server.nodes.get(nodeId);
      return { Index: server.nodeAllocIndex(nodeId) };
    },
    async upsertServices(registrations) {
      server.services.upsert(registrations);
    },
    async deleteServices(ids) {
      server.services.remove(ids);
    },
    async getService(name, namespace) {
      return server.services.get(name, namespace);
    },
  };
}

