/**
 * PUT /v1/search {Prefix, Context}: IDs starting with the prefix, per
 * context (Nomad's SearchResponse), with the index of the tables searched.
 */
import type { Hono } from "hono";
import { parseOrThrow } from "../../lib/validation.ts";
import { SEARCH_TABLES, type SearchEndpoint } from "../../server/endpoints/search.ts";
import { SearchRequestSchema } from "../../structs/api.ts";
import { jsonBody } from "../body.ts";
import { serverCall, type IndexedTables } from "./server-query.ts";

export function searchRoutes(search: SearchEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    app.on(["PUT", "POST"], "/v1/search", async (c) => {
      const request = parseOrThrow(SearchRequestSchema, await jsonBody(c), "search request");
      const contexts = serverCall(() => search.contexts(request.Context));
      const response = search.prefixSearch(request.Prefix, request.Context);
      const index = Math.max(1, tables.tableIndex(...contexts.map((context) => SEARCH_TABLES[context])));
      c.header("X-Nomad-Index", String(index));
      return c.json({ ...response, Index: index, KnownLeader: true, LastContact: 0 });
    });
  };
}
