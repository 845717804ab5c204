/**
 * The server's allocation and evaluation endpoints:
 *
 *   GET  /v1/allocations[?prefix=]        list stubs                          (blocking)
 *   GET  /v1/allocation/:id               the alloc with its job, Nomad's shape (blocking)
 *   PUT  /v1/allocation/:id/stop          stop it (a replacement is placed)
 *   GET  /v1/evaluations[?prefix=]        evaluations                         (blocking)
 *   GET  /v1/evaluation/:id               one evaluation                      (blocking)
 *   GET  /v1/evaluation/:id/allocations   the allocs it placed                (blocking)
 */
import type { Hono } from "hono";
import type { AllocEndpoint } from "../../server/endpoints/alloc.ts";
import type { EvalEndpoint } from "../../server/endpoints/eval.ts";
import { apiAllocation } from "../../structs/alloc.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";
import { WRITE } from "../acl/route-rules.ts";
import { namespaceFilter } from "../acl/namespaces.ts";

export function allocationsRoutes(allocs: AllocEndpoint, evals: EvalEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    app.get("/v1/allocations", (c) => blockingQuery(c, tables, ["allocs"], () => allocs.list(c.req.query("prefix"), namespaceFilter(c))));
    app.get("/v1/allocation/:id", (c) => blockingQuery(c, tables, ["allocs"], () => apiAllocation(allocs.get(c.req.param("id")))));
    app.on(WRITE, "/v1/allocation/:id/stop", (c) => c.json(serverCall(() => allocs.stop(c.req.param("id")))));

    app.get("/v1/evaluations", (c) => blockingQuery(c, tables, ["evals"], () => evals.list(c.req.query("prefix"), namespaceFilter(c))));
    app.get("/v1/evaluation/:id", (c) => blockingQuery(c, tables, ["evals"], () => evals.get(c.req.param("id"))));
    app.get("/v1/evaluation/:id/allocations", (c) =>
      blockingQuery(c, tables, ["allocs"], () => evals.allocations(c.req.param("id"))),
    );
  };
}
