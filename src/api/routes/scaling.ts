/**
 * Nomad 1.x's scaling policies (command/agent/scaling_endpoint.go), one per
 * job group with a `scaling` block:
 *
 *   GET /v1/scaling/policies[?job=&type=]   stubs {ID, Enabled, Type, Target, CreateIndex, ModifyIndex} (blocking)
 *   GET /v1/scaling/policy/:id              the policy, or 404 "policy not found"                   (blocking)
 */
import type { Hono } from "hono";
import type { ScalingPolicyEndpoint } from "../../server/endpoints/scaling-policies.ts";
import { namespaceFilter } from "../acl/namespaces.ts";
import { blockingQuery, type IndexedTables } from "./server-query.ts";

export function scalingRoutes(policies: ScalingPolicyEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    app.get("/v1/scaling/policies", (c) =>
      blockingQuery(c, tables, ["jobs"], () => policies.list({ job: c.req.query("job") ?? "", type: c.req.query("type") ?? "", inNamespace: namespaceFilter(c) })),
    );
    app.get("/v1/scaling/policy/:id", (c) => blockingQuery(c, tables, ["jobs"], () => policies.get(c.req.param("id"))));
  };
}
