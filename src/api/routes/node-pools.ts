/**
 * Nomad 1.6's node pool endpoints (docs/nomad-1x-api.md has the shapes).
 *
 *   GET    /v1/node/pools[?prefix=]        every pool, by name ("all" and "default" built in)   (blocking)
 *   PUT    /v1/node/pools                  create or update {Name, Description, Meta, SchedulerConfiguration}
 *   GET    /v1/node/pool/:name             one pool, or 404                                     (blocking)
 *   PUT    /v1/node/pool/:name             the same as PUT /v1/node/pools, the body's Name must match
 *   DELETE /v1/node/pool/:name             refused for built-ins and while a node or a live job is in it
 *   GET    /v1/node/pool/:name/nodes       node list stubs of the pool ("all": every node)      (blocking)
 *   GET    /v1/node/pool/:name/jobs        job list stubs of jobs in the pool, ?namespace= (*)  (blocking)
 *
 * Writes take PUT and POST and answer an empty body with X-Nomad-Index, as Nomad's do.
 */
import type { Context, Hono } from "hono";
import type { JobEndpoint } from "../../server/endpoints/job.ts";
import type { NodePoolEndpoint } from "../../server/endpoints/node-pool.ts";
import type { NodeEndpoint } from "../../server/endpoints/node.ts";
import { NodePoolUpsertSchema } from "../../structs/node-pool.ts";
import { parseOrThrow } from "../../lib/validation.ts";
import { jsonBody } from "../body.ts";
import { badRequest } from "../errors.ts";
import { namespaceFilter } from "../acl/namespaces.ts";
import { WRITE } from "../acl/route-rules.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";

export function nodePoolRoutes(pools: NodePoolEndpoint, nodes: NodeEndpoint, jobs: JobEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    const upsert = async (c: Context, pathName: string | undefined) => {
      const body = parseOrThrow(NodePoolUpsertSchema, await jsonBody(c), "node pool");
      if (pathName !== undefined && body.Name !== pathName) throw badRequest("Node pool name does not match request path");
      c.header("X-Nomad-Index", String(serverCall(() => pools.upsert(body)).Index));
      return c.body(null, 200);
    };
    const noPrefix = (c: Context) => {
      if (c.req.query("prefix")) throw badRequest("prefix argument not allowed");
    };

    app.get("/v1/node/pools", (c) => blockingQuery(c, tables, ["nodePools"], () => pools.list(c.req.query("prefix") ?? "")));
    app.on(WRITE, "/v1/node/pools", (c) => upsert(c, undefined));
    app.get("/v1/node/pool/:name/nodes", (c) => {
      noPrefix(c);
      return blockingQuery(c, tables, ["nodePools", "nodes"], () => {
        const inPool = new Set(pools.nodes(c.req.param("name")).map((node) => node.ID));
        return nodes.list().filter((stub) => inPool.has(stub.ID));
      });
    });
    app.get("/v1/node/pool/:name/jobs", (c) => {
      noPrefix(c);
      return blockingQuery(c, tables, ["nodePools", "jobs", "allocs"], () => {
        const inPool = pools.holdsJobsOf(c.req.param("name"));
        return jobs.list(undefined, namespaceFilter(c)).filter((stub) => inPool(stub.NodePool));
      });
    });
    app.get("/v1/node/pool/:name", (c) => blockingQuery(c, tables, ["nodePools"], () => pools.get(c.req.param("name"))));
    app.on(WRITE, "/v1/node/pool/:name", (c) => upsert(c, c.req.param("name")));
    app.delete("/v1/node/pool/:name", (c) => {
      c.header("X-Nomad-Index", String(serverCall(() => pools.delete(c.req.param("name"))).Index));
      return c.body(null, 200);
    });
  };
}
