/**
 * PUT /v1/search {Prefix, Context}: IDs starting with the prefix, per
 * context (Nomad's SearchResponse), with the index of the tables searched.
 * POST /v1/search/fuzzy {Text, Context}: Nomad 1.x's fuzzy search, names
 * containing the text (FuzzySearchResponse: {ID, Scope} per match).
 * With ACLs, a context the caller may not read is left out, as Nomad does;
 * variables are those the caller may list.
 */
import type { Context, Hono } from "hono";
import { parseOrThrow } from "../../lib/validation.ts";
import { FUZZY_TABLES, type FuzzyContext, type FuzzySearchEndpoint } from "../../server/endpoints/fuzzy-search.ts";
import { SEARCH_TABLES, type SearchContext, type SearchEndpoint } from "../../server/endpoints/search.ts";
import type { VariablesEndpoint } from "../../server/variables/endpoint.ts";
import { FuzzySearchRequestSchema, SearchRequestSchema } from "../../structs/api.ts";
import { ALL_NAMESPACES } from "../../structs/namespace.ts";
import { requestNamespace } from "../acl/namespaces.ts";
import { callerOf, queryView } from "../acl/caller.ts";
import { allOf, allows, anyOf, NAMESPACE_LISTED, namespace, plugin, scope, VARIABLES, WRITE, type Rule } from "../acl/route-rules.ts";
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

/** What each fuzzy context takes; variables are judged per path by the list. */
const FUZZY_CONTEXT_RULES: Readonly<Record<FuzzyContext, Rule>> = {
  allocs: CONTEXT_RULES.allocs,
  deployment: CONTEXT_RULES.deployment,
  evals: CONTEXT_RULES.evals,
  jobs: CONTEXT_RULES.jobs,
  nodes: CONTEXT_RULES.nodes,
  plugins: CONTEXT_RULES.plugins,
  namespaces: NAMESPACE_LISTED,
  scaling_policy: anyOf(namespace("list-scaling-policies"), allOf(namespace("list-jobs"), namespace("read-job"))),
  vars: VARIABLES,
};

/** The namespace searched: ?namespace=, else the body's, else default (Nomad's parseNamespace over the body's QueryOptions). */
function searchedNamespace(c: Context, body: { Namespace: string }): string {
  return c.req.query("namespace") || body.Namespace || requestNamespace(c);
}

/** The contexts the caller may search in the asked namespace (with `*`: every context; visible() narrows each). */
function readable<C extends string>(c: Context, rules: Readonly<Record<C, Rule>>, contexts: readonly C[], asked: string): C[] {
  const { acl } = callerOf(c);
  if (asked === ALL_NAMESPACES) return [...contexts];
  return contexts.filter((context) => allows(rules[context], acl, asked, queryView(c)));
}

/** Whether a match in `namespace` is shown: in the asked namespace (any with `*`) and readable there. */
function visible(c: Context, asked: string): (context: SearchContext, namespace: string) => boolean {
  const { acl } = callerOf(c);
  return (context, namespace) => (asked === ALL_NAMESPACES || namespace === asked) && allows(CONTEXT_RULES[context], acl, namespace, queryView(c));
}

/** As visible(), for the fuzzy contexts; a namespace is shown where the caller may see it, whatever the request's namespace. */
function fuzzyVisible(c: Context, asked: string): (context: FuzzyContext, namespace: string) => boolean {
  const { acl } = callerOf(c);
  return (context, namespace) =>
    (context === "namespaces" || asked === ALL_NAMESPACES || namespace === asked) && allows(FUZZY_CONTEXT_RULES[context], acl, namespace, queryView(c));
}

export function searchRoutes(search: SearchEndpoint, fuzzy: FuzzySearchEndpoint, variables: VariablesEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    app.on(WRITE, "/v1/search", async (c) => {
      const request = parseOrThrow(SearchRequestSchema, await jsonBody(c), "search request");
      const asked = searchedNamespace(c, request);
      const contexts = readable(c, CONTEXT_RULES, serverCall(() => search.contexts(request.Context)), asked);
      const response = search.prefixSearch(request.Prefix, contexts, visible(c, asked));
      const index = Math.max(1, tables.tableIndex(...contexts.map((context) => SEARCH_TABLES[context])));
      c.header("X-Nomad-Index", String(index));
      return c.json({ ...response, Index: index, KnownLeader: true, LastContact: 0 });
    });

    app.on(WRITE, "/v1/search/fuzzy", async (c) => {
      const request = parseOrThrow(FuzzySearchRequestSchema, await jsonBody(c), "fuzzy search request");
      const asked = searchedNamespace(c, request);
      const contexts = readable(c, FUZZY_CONTEXT_RULES, serverCall(() => fuzzy.contexts(request.Context)), asked);
      const listed = contexts.includes("vars")
        ? variables.list(callerOf(c), { namespace: asked, prefix: "", perPage: 0, nextToken: "", reverse: false }).variables
        : [];
      const response = serverCall(() => fuzzy.search({ text: request.Text, contexts, prefix: c.req.query("prefix") ?? "", variables: listed, visible: fuzzyVisible(c, asked) }));
      const indexOf = (context: FuzzyContext) => {
        const table = FUZZY_TABLES[context];
        return table === "variables" ? variables.index : tables.tableIndex(table);
      };
      const index = Math.max(1, ...contexts.map(indexOf));
      c.header("X-Nomad-Index", String(index));
      return c.json({ ...response, Index: index, KnownLeader: true, LastContact: 0 });
    });
  };
}
