/**
 * The deployment endpoints (Nomad's /v1/deployments and /v1/deployment/...).
 *
 *   GET  /v1/deployments[?prefix=]                 newest first              (blocking)
 *   GET  /v1/deployment/:id                        one deployment            (blocking)
 *   GET  /v1/deployment/allocations/:id            its allocs                (blocking)
 *   PUT  /v1/deployment/promote/:id                {All, Groups}
 *   PUT  /v1/deployment/fail/:id
 *   PUT  /v1/deployment/pause/:id                  {Pause}: pause or resume
 *   PUT  /v1/deployment/allocation-health/:id      {HealthyAllocationIDs, UnhealthyAllocationIDs}
 *   PUT  /v1/deployment/unblock/:id                400: only multiregion deployments block
 */
import type { Hono } from "hono";
import { parseOrThrow } from "../../lib/validation.ts";
import type { DeploymentEndpoint } from "../../server/endpoints/deployment.ts";
import { DeploymentAllocHealthRequestSchema, DeploymentPauseRequestSchema, DeploymentPromoteRequestSchema } from "../../structs/deployment.ts";
import { jsonBody } from "../body.ts";
import { badRequest } from "../errors.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";
import { WRITE } from "../acl/route-rules.ts";
import { namespaceFilter } from "../acl/namespaces.ts";

export function deploymentRoutes(deployments: DeploymentEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    app.get("/v1/deployments", (c) => blockingQuery(c, tables, ["deployments"], () => deployments.list(c.req.query("prefix"), namespaceFilter(c))));
    app.get("/v1/deployment/allocations/:id", (c) => blockingQuery(c, tables, ["allocs", "deployments"], () => deployments.allocations(c.req.param("id"))));
    app.on(WRITE, "/v1/deployment/promote/:id", async (c) => {
      const request = parseOrThrow(DeploymentPromoteRequestSchema, await jsonBody(c, {}), "request body");
      return c.json(serverCall(() => deployments.promote(c.req.param("id"), request.All, request.Groups ?? [])));
    });
    app.on(WRITE, "/v1/deployment/fail/:id", (c) => c.json(serverCall(() => deployments.fail(c.req.param("id")))));
    app.on(WRITE, "/v1/deployment/pause/:id", async (c) => {
      const request = parseOrThrow(DeploymentPauseRequestSchema, await jsonBody(c, {}), "request body");
      return c.json(serverCall(() => deployments.pause(c.req.param("id"), request.Pause)));
    });
    app.on(WRITE, "/v1/deployment/allocation-health/:id", async (c) => {
      const request = parseOrThrow(DeploymentAllocHealthRequestSchema, await jsonBody(c), "request body");
      return c.json(serverCall(() => deployments.allocationHealth(c.req.param("id"), request.HealthyAllocationIDs ?? [], request.UnhealthyAllocationIDs ?? [])));
    });
    app.on(WRITE, "/v1/deployment/unblock/:id", (c) => {
      serverCall(() => deployments.get(c.req.param("id")));
      throw badRequest("can't unblock a deployment that is not blocked (only multiregion deployments block)");
    });
    app.get("/v1/deployment/:id", (c) => blockingQuery(c, tables, ["deployments"], () => deployments.get(c.req.param("id"))));
  };
}
