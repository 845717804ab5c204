/**
 * The server's allocation and evaluation endpoints:
 *
 *   GET  /v1/allocations[?prefix=]        list stubs              (blocking)
 *   GET  /v1/allocation/:id               the alloc with its job  (blocking)
 *   POST /v1/allocation/:id/stop          stop it (a replacement is placed)
 *   GET  /v1/evaluations[?prefix=]        evaluations             (blocking)
 *   GET  /v1/evaluation/:id               one evaluation          (blocking)
 *   GET  /v1/evaluation/:id/allocations   the allocs it placed    (blocking)
 */
import type { Hono } from "hono";
import type { Server } from "../../server/server.ts";
import { blockingQuery, serverCall } from "./server-query.ts";

export type AllocationsApi = Pick<
  Server,
  "tableIndex" | "waitForTables" | "allocations" | "allocation" | "stopAllocation" | "evaluations" | "evaluation" | "evaluationAllocations"
>;

export function allocationsRoutes(server: AllocationsApi) {
  return (app: Hono) => {
    app.get("/v1/allocations", (c) => blockingQuery(c, server, ["allocs"], () => server.allocations(c.req.query("prefix"))));
    app.get("/v1/allocation/:id", (c) => blockingQuery(c, server, ["allocs"], () => server.allocation(c.req.param("id"))));
    app.on(["POST", "PUT"], "/v1/allocation/:id/stop", (c) => c.json(serverCall(() => server.stopAllocation(c.req.param("id")))));

    app.get("/v1/evaluations", (c) => blockingQuery(c, server, ["evals"], () => server.evaluations(c.req.query("prefix"))));
    app.get("/v1/evaluation/:id", (c) => blockingQuery(c, server, ["evals"], () => server.evaluation(c.req.param("id"))));
    app.get("/v1/evaluation/:id/allocations", (c) =>
      blockingQuery(c, server, ["allocs"], () => server.evaluationAllocations(c.req.param("id"))),
    );
  };
}
