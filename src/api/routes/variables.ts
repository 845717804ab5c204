/**
 * Nomad 1.x's Variables API (command/agent/variable_endpoint.go); shapes in
 * docs/variables.md. Who may do what is judged per path by the endpoint
 * (a token's `variables` rules, a task's own job paths), not by the route.
 *
 *   GET    /v1/vars[?prefix=&namespace=&per_page=&next_token=&reverse=]
 *                              metadata of the variables the caller may list;
 *                              X-Nomad-NextToken names the next page
 *   GET    /v1/var/:path       the variable with its Items, or 404 "variable not found"
 *   PUT    /v1/var/:path[?cas=N]   {Namespace?, Items}: the variable as written;
 *                              a failed check-and-set is a 409 with the current one
 *   DELETE /v1/var/:path[?cas=N]   204; a failed check-and-set is a 409 as above
 *
 * Both reads are blocking queries (?index=, ?wait=).
 */
import type { Context, Hono } from "hono";
import * as v from "valibot";
import type { VariablesEndpoint, VariableWriteResult } from "../../server/variables/endpoint.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";
import { VariableUpsertSchema, type Variable } from "../../structs/variable.ts";
import { parseOrThrow } from "../../lib/validation.ts";
import { callerOf } from "../acl/caller.ts";
import { WRITE } from "../acl/route-rules.ts";
import type { Routes } from "../app.ts";
import { jsonBody } from "../body.ts";
import { badRequest, parseQuery } from "../errors.ts";
import { awaitQueryIndex, serverCall } from "./server-query.ts";

/** A variable's path is the rest of the URL, slashes and all. */
export const VARIABLE_ROUTE = "/v1/var/:path{.+}";

const ListQuerySchema = v.object({
  namespace: v.optional(v.pipe(v.string(), v.minLength(1, "expected a namespace name or *")), DEFAULT_NAMESPACE),
  prefix: v.optional(v.string(), ""),
  per_page: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, "expected a non-negative integer"), v.transform(Number)), "0"),
  next_token: v.optional(v.string(), ""),
  reverse: v.optional(v.string(), "false"),
  filter: v.optional(v.literal("", "filter expressions are not supported by drover; list with prefix= instead")),
});

const namespaceOf = (c: Context) => c.req.query("namespace") || DEFAULT_NAMESPACE;

/** ?cas=N, in Nomad's words when it is not a number. */
function casOf(c: Context): number | undefined {
  const cas = c.req.query("cas");
  if (cas === undefined || cas === "") return undefined;
  if (!/^\d+$/.test(cas)) throw badRequest(`can not parse cas: strconv.ParseUint: parsing "${cas}": invalid syntax`);
  return Number(cas);
}

function indexed(c: Context, index: number): void {
  c.header("X-Nomad-Index", String(index));
  c.header("X-Nomad-KnownLeader", "true");
  c.header("X-Nomad-LastContact", "0");
}

/** A write's answer: the conflict as a 409 with the current variable, else `ok`. */
function writeAnswer(c: Context, result: VariableWriteResult, ok: (written: Variable | undefined) => Response): Response {
  if (result.conflict) {
    indexed(c, result.variable.ModifyIndex);
    return c.json(result.variable, 409);
  }
  indexed(c, result.index);
  return ok(result.variable);
}

export function variablesRoutes(variables: VariablesEndpoint): Routes {
  return (app: Hono) => {
    app.get("/v1/vars", async (c) => {
      const query = parseQuery(ListQuerySchema, c.req.query());
      await awaitQueryIndex(c, (minIndex, timeoutMs, signal) => variables.waitFor(() => variables.index, minIndex, timeoutMs, signal));
      const page = serverCall(() =>
        variables.list(callerOf(c), { namespace: query.namespace, prefix: query.prefix, perPage: query.per_page, nextToken: query.next_token, reverse: query.reverse === "true" }),
      );
      indexed(c, variables.index);
      if (page.nextToken !== "") c.header("X-Nomad-NextToken", page.nextToken);
      return c.json(page.variables);
    });

    // Nomad's answer to /v1/var/ without a path, whatever the method.
    app.on(["GET", ...WRITE, "DELETE"], "/v1/var/", () => {
      throw badRequest("missing variable path");
    });

    app.get(VARIABLE_ROUTE, async (c) => {
      const namespace = namespaceOf(c);
      const path = c.req.param("path");
      const caller = callerOf(c);
      // Judged before any wait, so a caller without read learns nothing by blocking.
      serverCall(() => variables.read(caller, namespace, path));
      await awaitQueryIndex(c, (minIndex, timeoutMs, signal) => variables.waitFor(() => variables.readIndex(namespace, path), minIndex, timeoutMs, signal));
      const variable = serverCall(() => variables.read(caller, namespace, path));
      indexed(c, variables.readIndex(namespace, path));
      if (!variable) return c.text("variable not found", 404);
      return c.json(variable);
    });

    app.on(WRITE, VARIABLE_ROUTE, async (c) => {
      const body = parseOrThrow(VariableUpsertSchema, await jsonBody(c), "variable");
      if (!body.Items || Object.keys(body.Items).length === 0) throw badRequest("variable missing required Items object");
      const items = body.Items;
      const write = { namespace: body.Namespace || namespaceOf(c), path: c.req.param("path"), cas: casOf(c) };
      const result = serverCall(() => variables.set(callerOf(c), write, items));
      return writeAnswer(c, result, (written) => c.json(written));
    });

    app.delete(VARIABLE_ROUTE, (c) => {
      const write = { namespace: namespaceOf(c), path: c.req.param("path"), cas: casOf(c) };
      const result = serverCall(() => variables.delete(callerOf(c), write));
      return writeAnswer(c, result, () => c.body(null, 204));
    });
  };
}
