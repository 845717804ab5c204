/**
 * The ACL check at the HTTP boundary, before any route runs:
 *
 *   request ──> the route it will reach ──> its rule (route-rules.ts)
 *      │ no route: on to the 404          │ public, or a task's own grant (task-access.ts): on
 *      ▼                                  ▼
 *   token: X-Nomad-Token, else Authorization: Bearer (Nomad's two places);
 *   none is the anonymous caller (the "anonymous" policy)
 *      │ unknown or expired token ──> 403 "ACL token not found" / "ACL token expired"
 *      ▼
 *   the rule against the caller's ACL ──> 403 "Permission denied" (nothing ran)
 *      │ allowed
 *      ▼
 *   the caller recorded (caller.ts) ──> the route
 *
 * A websocket whose rule takes a handshake and that carries no token in its
 * headers (Nomad's ws_handshake=true) reaches its route unjudged; the route
 * judges the token of its first frame (caller.authorizeHandshake).
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { RouterRoute } from "hono/types";
import { PERMISSION_DENIED, type Resolution, type TokenResolver } from "../../acl/resolver.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";
import { isGranted, queryView, setCaller, setPendingCheck, UNJUDGED } from "./caller.ts";
import { allows, type Rule } from "./route-rules.ts";

export interface AclGuardOptions {
  resolver: TokenResolver;
  /** Told of each refusal (never with the secret), for the agent log. */
  refused?(refusal: { method: string; path: string; reason: string; accessor?: string }): void;
}

/** The request's token, where Nomad looks for one. */
export function requestToken(headers: Headers): string | undefined {
  const header = headers.get("X-Nomad-Token")?.trim();
  if (header) return header;
  const authorization = headers.get("Authorization");
  if (!authorization) return undefined;
  const [scheme, value] = authorization.trim().split(/\s+/, 2);
  return scheme?.toLowerCase() === "bearer" && value ? value : undefined;
}

const GO_TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);

/** `rules()` gives each mounted route's rule; it is read per request, so routes may be bound after the guard is made. */
export function aclGuard(rules: () => ReadonlyMap<RouterRoute, Rule>, options: AclGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const bound = rules();
    let rule: Rule | undefined;
    for (const route of matchedRoutes(c)) if ((rule = bound.get(route))) break;
    if (isGranted(c)) return next();
    if (rule === undefined || rule.kind === "public") {
      // Nothing to judge; the caller stays one without rights, never an open one.
      setCaller(c, UNJUDGED);
      return next();
    }
    const query = queryView(c);
    const secret = requestToken(c.req.raw.headers);
    if (rule.kind === "handshake" && secret === undefined && GO_TRUE.has(c.req.query("ws_handshake") ?? "")) {
      setPendingCheck(c, { rule: rule.rule, query, resolver: options.resolver });
      return next();
    }
    const pending = options.resolver.resolve(secret);
    const resolution: Resolution = pending instanceof Promise ? await pending : pending;
    if ("refused" in resolution) return refuse(c, resolution.refused, options);
    if (!allows(rule, resolution.caller.acl, DEFAULT_NAMESPACE, query)) {
      return refuse(c, PERMISSION_DENIED, options, resolution.caller.token?.AccessorID);
    }
    setCaller(c, resolution.caller);
    return next();
  };
}

function refuse(c: Context, reason: string, options: AclGuardOptions, accessor?: string): Response {
  options.refused?.({ method: c.req.method, path: c.req.path, reason, ...(accessor ? { accessor } : {}) });
  return c.text(reason, 403);
}
