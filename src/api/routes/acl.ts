/**
 * Nomad's ACL endpoints (command/agent/acl_endpoint.go). Who may call each is
 * in acl/route-rules.ts; without `acl { enabled = true }` every one answers
 * Nomad's 400 "ACL support disabled".
 *
 *   PUT  /v1/acl/bootstrap            the first management token, with its secret (once)
 *   GET  /v1/acl/policies[?prefix=]   policy stubs (a client token: its own policies)
 *   GET  /v1/acl/policy/:name         a policy with its RulesJSON
 *   PUT  /v1/acl/policy/:name         {Name, Description, Rules}
 *   DELETE /v1/acl/policy/:name
 *   GET  /v1/acl/tokens[?prefix=]     token stubs (never a secret)
 *   PUT  /v1/acl/token                create {Name, Type, Policies, Global, ExpirationTTL | ExpirationTime}:
 *                                     the answer is the only one that carries the SecretID
 *   GET  /v1/acl/token/self           the caller's token, with the secret it called with
 *   GET  /v1/acl/token/:accessor      a token (a client token: only itself)
 *   PUT  /v1/acl/token/:accessor      update name, type, policies
 *   DELETE /v1/acl/token/:accessor
 */
import type { Context, Hono } from "hono";
import { PolicyUpsertSchema, TokenUpsertSchema } from "../../acl/structs.ts";
import { parseOrThrow } from "../../lib/validation.ts";
import type { AclEndpoint } from "../../server/acl/endpoint.ts";
import { callerOf } from "../acl/caller.ts";
import { requestToken } from "../acl/guard.ts";
import type { Routes } from "../app.ts";
import { jsonBody } from "../body.ts";
import { ApiError, badRequest } from "../errors.ts";
import { serverCall, serverCallAsync } from "./server-query.ts";
import { WRITE } from "../acl/route-rules.ts";

export const ACL_DISABLED = "ACL support disabled";

export function aclRoutes(acl: AclEndpoint, enabled: boolean): Routes {
  return (app: Hono) => {
    // Nomad's answer without ACLs, for every ACL path (the CLI prints it); the body runs only with ACLs on.
    const requireEnabled = () => {
      if (!enabled) throw new ApiError(400, ACL_DISABLED);
    };
    const indexed = (c: Context, body: () => unknown) => {
      requireEnabled();
      c.header("X-Nomad-Index", String(acl.index));
      const answer = body();
      return answer === undefined ? c.body(null, 200) : c.json(answer);
    };

    app.on(WRITE, "/v1/acl/bootstrap", (c) => indexed(c, () => serverCall(() => acl.bootstrap())));

    app.get("/v1/acl/policies", (c) => indexed(c, () => acl.listPolicies(callerOf(c), c.req.query("prefix"))));
    app.get("/v1/acl/policy/:name", (c) => indexed(c, () => serverCall(() => acl.getPolicy(callerOf(c), c.req.param("name")))));
    app.on(WRITE, "/v1/acl/policy/:name", async (c) => {
      requireEnabled();
      const request = parseOrThrow(PolicyUpsertSchema, await jsonBody(c), "ACL policy");
      if (request.Name !== c.req.param("name")) throw badRequest("ACL policy name does not match request path");
      await serverCallAsync(() => acl.upsertPolicy(request));
      return indexed(c, () => undefined);
    });
    app.delete("/v1/acl/policy/:name", (c) => indexed(c, () => serverCall(() => acl.deletePolicy(c.req.param("name")))));

    app.get("/v1/acl/tokens", (c) => indexed(c, () => acl.listTokens(c.req.query("prefix"))));
    app.on(WRITE, "/v1/acl/token", async (c) => {
      requireEnabled();
      const request = parseOrThrow(TokenUpsertSchema, await jsonBody(c), "ACL token");
      return indexed(c, () => serverCall(() => acl.upsertToken(request)));
    });
    app.get("/v1/acl/token/self", (c) => indexed(c, () => serverCall(() => acl.self(callerOf(c), requestToken(c.req.raw.headers) ?? ""))));
    app.get("/v1/acl/token/:accessor", (c) => indexed(c, () => serverCall(() => acl.getToken(callerOf(c), c.req.param("accessor")))));
    app.on(WRITE, "/v1/acl/token/:accessor", async (c) => {
      requireEnabled();
      const request = parseOrThrow(TokenUpsertSchema, await jsonBody(c), "ACL token");
      if (request.AccessorID !== c.req.param("accessor")) throw badRequest("ACL token accessor does not match request path");
      return indexed(c, () => serverCall(() => acl.upsertToken(request)));
    });
    app.delete("/v1/acl/token/:accessor", (c) => indexed(c, () => serverCall(() => acl.deleteToken(c.req.param("accessor")))));
  };
}

