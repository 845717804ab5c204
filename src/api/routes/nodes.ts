/**
 * The server's node endpoints and its garbage collection:
 *
 *   GET /v1/nodes[?prefix=]         list stubs             (blocking)
 *   GET /v1/node/:id                the node               (blocking)
 *   GET /v1/node/:id/allocations    allocs on the node, each with its job (blocking)
 *   PUT /v1/system/gc               collect garbage now, ignoring ages
 */
import type { Hono } from "hono";
import type { Server } from "../../server/server.ts";
import { blockingQuery, serverCall } from "./server-query.ts";

export type NodesApi = Pick<Server, "tableIndex" | "waitForTables" | "nodes" | "node" | "nodeAllocations" | "collectGarbage">;

export function nodesRoutes(server: NodesApi) {
  return (app: Hono) => {
    app.get("/v1/nodes", (c) => blockingQuery(c, server, ["nodes"], () => server.nodes(c.req.query("prefix"))));
    app.get("/v1/node/:id", (c) => blockingQuery(c, server, ["nodes"], () => server.node(c.req.param("id"))));
    app.get("/v1/node/:id/allocations", (c) =>
      blockingQuery(c, server, ["allocs"], () => server.nodeAllocations(server.node(c.req.param("id")).ID)),
    );
    app.on(["PUT", "POST"], "/v1/system/gc", (c) => c.json(serverCall(() => server.collectGarbage(true))));
  };
}
