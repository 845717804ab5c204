/**
 * The server's node endpoints and its system endpoints:
 *
 *   GET /v1/nodes[?prefix=&os=&resources=]   list stubs, with os.name and resources on request (blocking)
 *   GET /v1/node/:id                      the node, in Nomad's API shape     (blocking)
 *   GET /v1/node/:id/allocations          allocs on the node, with their job (blocking)
 *   PUT /v1/node/:id/drain                {DrainSpec, MarkEligible}; or the legacy ?enable=true|false
 *                                         without a body (a forced drain; ending it marks the node eligible)
 *   PUT /v1/node/:id/eligibility          {Eligibility}
 *   PUT /v1/node/:id/evaluate             evaluate the jobs on the node
 *   PUT /v1/system/gc                     collect garbage now, ignoring ages
 *   PUT /v1/system/reconcile/summaries    job summaries are always computed fresh: nothing to do
 *
 * Writes take PUT and POST, as Nomad's do.
 */
import type { Hono } from "hono";
import * as v from "valibot";
import { parseOrThrow } from "../../lib/validation.ts";
import type { NodeEndpoint } from "../../server/endpoints/node.ts";
import type { GcResult } from "../../server/gc.ts";
import { apiAllocation } from "../../structs/alloc.ts";
import { NodeDrainRequestSchema, NodeEligibilityRequestSchema, type NodeDrainRequest } from "../../structs/api.ts";
import { GoBool } from "../../structs/common.ts";
import { apiNode } from "../../structs/node.ts";
import { callerOf } from "../acl/caller.ts";
import { jsonBody } from "../body.ts";
import { ApiError, parseQuery } from "../errors.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";
import { WRITE } from "../acl/route-rules.ts";

/** Nomad 1.x's node list fields (parseNodeListStubFields): Go booleans. */
const NodeFieldsQuery = v.object({
  os: v.optional(GoBool, "false"),
  resources: v.optional(GoBool, "false"),
});

/** A negative deadline forces the drain: what the legacy form always asked for. */
const FORCE_DEADLINE_NS = -1_000_000_000;

/**
 * The drain form of Nomad's older clients, which Nomad 0.12's agent still
 * reads (command/agent/node_endpoint.go): ?enable=true is a forced drain,
 * ?enable=false ends it and makes the node eligible again.
 */
function legacyDrainRequest(enable: string): NodeDrainRequest {
  const parsed = v.safeParse(GoBool, enable);
  if (!parsed.success) throw new ApiError(400, "invalid enable value");
  return parsed.output ? { DrainSpec: { Deadline: FORCE_DEADLINE_NS, IgnoreSystemJobs: false }, MarkEligible: false } : { DrainSpec: null, MarkEligible: true };
}

export function nodesRoutes(nodes: NodeEndpoint, collectGarbage: (force: boolean) => GcResult, tables: IndexedTables) {
  return (app: Hono) => {
    app.get("/v1/nodes", (c) => {
      const fields = parseQuery(NodeFieldsQuery, c.req.query());
      return blockingQuery(c, tables, ["nodes"], () => nodes.list(c.req.query("prefix"), fields));
    });
    app.get("/v1/node/:id", (c) => blockingQuery(c, tables, ["nodes"], () => apiNode(nodes.get(c.req.param("id")))));
    // With ACLs, a caller without read-job sees the node but none of its allocs (Nomad's filter).
    app.get("/v1/node/:id/allocations", (c) =>
      blockingQuery(c, tables, ["allocs"], () => {
        const allocs = nodes.allocations(nodes.get(c.req.param("id")).ID);
        const { acl } = callerOf(c);
        return allocs.filter((alloc) => acl.allowNamespaceOperation(alloc.Namespace, "read-job")).map(apiAllocation);
      }),
    );
    app.on(WRITE, "/v1/node/:id/drain", async (c) => {
      const enable = c.req.query("enable");
      const request = enable ? legacyDrainRequest(enable) : parseOrThrow(NodeDrainRequestSchema, await jsonBody(c), "drain request");
      return c.json(serverCall(() => nodes.updateDrain(c.req.param("id"), request)));
    });
    app.on(WRITE, "/v1/node/:id/eligibility", async (c) => {
      const request = parseOrThrow(NodeEligibilityRequestSchema, await jsonBody(c), "eligibility request");
      return c.json(serverCall(() => nodes.updateEligibility(c.req.param("id"), request.Eligibility)));
    });
    app.on(WRITE, "/v1/node/:id/evaluate", (c) => c.json(serverCall(() => nodes.evaluate(c.req.param("id")))));
    app.on(WRITE, "/v1/node/:id/purge", () => {
      throw new ApiError(400, "this node is the agent's own client: it cannot be purged while the agent runs");
    });
    app.on(WRITE, "/v1/system/gc", (c) => c.json(serverCall(() => collectGarbage(true))));
    app.on(WRITE, "/v1/system/reconcile/summaries", (c) => c.body(null, 200));
  };
}
