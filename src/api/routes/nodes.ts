/**
 * The server's node endpoints and its garbage collection:
 *
 *   GET /v1/nodes[?prefix=]         list stubs             (blocking)
 *   GET /v1/node/:id                the node               (blocking)
 *   GET /v1/node/:id/allocations    allocs on the node, each with its job (blocking)
 *   PUT /v1/system/gc               collect garbage now, ignoring ages
 */
import type { Hono } from "hono";
import type { NodeEndpoint } from "../../server/endpoints/node.ts";
import type { GcResult } from "../../server/gc.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";

export function nodesRoutes(nodes: NodeEndpoint, collectGarbage: (force: boolean) => GcResult, tables: IndexedTables) {
  return (app: Hono) => {
    app.get("/v1/nodes", (c) => blockingQuery(c, tables, ["nodes"], () => nodes.list(c.req.query("prefix"))));
    app.get("/v1/node/:id", (c) => blockingQuery(c, tables, ["nodes"], () => nodes.get(c.req.param("id"))));
    app.get("/v1/node/:id/allocations", (c) =>
      blockingQuery(c, tables, ["allocs"], () => nodes.allocations(nodes.get(c.req.param("id")).ID)),
    );
    app.on(["PUT", "POST"], "/v1/system/gc", (c) => c.json(serverCall(() => collectGarbage(true))));
  };
}
