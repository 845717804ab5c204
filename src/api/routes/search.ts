/**
 * PUT /v1/search {Prefix, Context}: IDs starting with the prefix, per
 * context (Nomad's SearchResponse), with the index of the tables searched.
 * With ACLs, a context the caller may not read is left out, as Nomad does.
 */
import type { Context, Hono } from "hono";
import { parseOrThrow } from "../../lib/validation.ts";
import { SEARCH_TABLES, type SearchContext, type SearchEndpoint } from "../../server/endpoints/search.ts";
import { SearchRequestSchema } from "../../structs/api.ts";
import { ALL_NAMESPACES } from "../../structs/namespace.ts";
import { requestNamespace } from "../acl/namespaces.ts";
import { callerOf, queryView } from "../acl/caller.ts";
import { allows, namespace, plugin, scope, WRITE, type Rule } from "../acl/route-rules.ts";
import { jsonBody } from "../body.ts";
import { serverCall, type IndexedTables } from "./server-query.ts";

/** What reading each context's IDs takes (Nomad's searchContexts). */
const CONTEXT_RULES: Readonly<Record<SearchContext, Rule>> = {
  allocs: namespace("read-job"),
  jobs: namespace("read-job"),
  evals: namespace("read-job"),
  deployment: namespace("read-job"),
  nodes: scope("node", "read"),
  plugins: plugin("read"),
  volumes: namespace("csi-list-volume"),
};

/** The contexts the caller may search in the asked namespace (with `*`: every context; visible() narrows each). */
function readable(c: Context, contexts: readonly SearchContext[]): SearchContext[] {
  const { acl } = callerOf(c);
  const asked = requestNamespace(c);
  if (asked === ALL_NAMESPACES) return [...contexts];
  return contexts.filter((context) => allows(CONTEXT_RULES[context], acl, asked, queryView(c)));
}

/** Whether a match in `namespace` is shown: in the asked namespace (any with `*`) and readable there. */
function visible(c: Context): (context: SearchContext, namespace: string) => boolean {
  const { acl } = callerOf(c);
  const asked = requestNamespace(c);
  return (context, namespace) => (asked === ALL_NAMESPACES || namespace === asked) && allows(CONTEXT_RULES[context], acl, namespace, queryView(c));
}

export function searchRoutes(search: SearchEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    app.on(WRITE, "/v1/search", async (c) => {
      const request = parseOrThrow(SearchRequestSchema, await jsonBody(c), "search request");
      const contexts = readable(c, serverCall(() => search.contexts(request.Context)));
      const response = search.prefixSearch(request.Prefix, contexts, visible(c));
      const index = Math.max(1, tables.tableIndex(...contexts.map((context) => SEARCH_TABLES[context])));
      c.header("X-Nomad-Index", String(index));
      return c.json({ ...response, Index: index, KnownLeader: true, LastContact: 0 });
    });
  };
}
