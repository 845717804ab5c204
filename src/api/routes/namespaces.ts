/**
 * Nomad 1.x's namespace endpoints (docs/namespaces.md has the shapes).
 *
 *   GET    /v1/namespaces[?prefix=]   the namespaces the caller may see, by name   (blocking)
 *   GET    /v1/namespace/:name        one namespace, or 404                        (blocking)
 *   PUT    /v1/namespace/:name        create or update {Name, Description, Meta, Capabilities, Quota}
 *   PUT    /v1/namespace              the same, the name in the body
 *   DELETE /v1/namespace/:name        refused for "default" and while jobs use it
 *
 * Writes take PUT and POST and answer an empty body with X-Nomad-Index, as Nomad's do.
 */
import type { Context, Hono } from "hono";
import type { NamespaceEndpoint } from "../../server/endpoints/namespace.ts";
import { NamespaceUpsertSchema } from "../../structs/namespace.ts";
import { parseOrThrow } from "../../lib/validation.ts";
import { jsonBody } from "../body.ts";
import { badRequest } from "../errors.ts";
import { callerOf } from "../acl/caller.ts";
import { WRITE } from "../acl/route-rules.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";

export function namespaceRoutes(namespaces: NamespaceEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    const written = (c: Context, index: number) => {
      c.header("X-Nomad-Index", String(index));
      return c.body(null, 200);
    };
    const upsert = async (c: Context, pathName: string | undefined) => {
      const body = parseOrThrow(NamespaceUpsertSchema, await jsonBody(c), "namespace");
      const name = pathName ?? body.Name;
      if (!name) throw badRequest("Namespace name is required");
      return written(c, serverCall(() => namespaces.upsert(name, body)).Index);
    };

    // Nomad lists only what the caller holds some right in (its ListNamespaces filter).
    app.get("/v1/namespaces", (c) =>
      blockingQuery(c, tables, ["namespaces"], () => namespaces.list(c.req.query("prefix") ?? "", (name) => callerOf(c).acl.allowNamespace(name))),
    );
    app.get("/v1/namespace/:name", (c) => blockingQuery(c, tables, ["namespaces"], () => namespaces.get(c.req.param("name"))));
    app.on(WRITE, "/v1/namespace/:name", (c) => upsert(c, c.req.param("name")));
    app.on(WRITE, "/v1/namespace", (c) => upsert(c, undefined));
    app.delete("/v1/namespace/:name", (c) => written(c, serverCall(() => namespaces.delete(c.req.param("name"))).Index));
  };
}
