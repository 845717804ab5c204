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
import { ALL_NAMESPACES } from "../../structs/namespace.ts";
import { requestNamespace } from "./namespaces.ts";
import { isGranted, queryView, setCaller, setPendingCheck, UNJUDGED } from "./caller.ts";
import { allows, type Rule } from "./route-rules.ts";

export interface AclGuardOptions {
  resolver: TokenResolver;
  /**
   * The namespace of the object a route addresses by ID (an alloc, eval or
   * deployment), judged there whatever ?namespace= says, as Nomad does;
   * undefined for other routes and unknown IDs.
   */
  objectNamespace?(method: string, routePath: string, param: (name: string) => string | undefined): string | undefined;
  /** Every namespace that exists: ?namespace=* passes where the rule passes in any of them. */
  namespaces?(): readonly string[];
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
    let routePath = "";
    for (const route of matchedRoutes(c)) {
      if ((rule = bound.get(route))) {
        routePath = route.path;
        break;
      }
    }
    const namespace = options.objectNamespace?.(c.req.method, routePath, pathParams(routePath, c.req.path)) ?? requestNamespace(c);
    if (isGranted(c)) return next();
    if (rule === undefined || rule.kind === "public") {
      // Nothing to judge; the caller stays one without rights, never an open one.
      setCaller(c, UNJUDGED);
      return next();
    }
    const query = queryView(c);
    const secret = requestToken(c.req.raw.headers);
    if (rule.kind === "handshake" && secret === undefined && GO_TRUE.has(c.req.query("ws_handshake") ?? "")) {
      setPendingCheck(c, { rule: rule.rule, query, resolver: options.resolver, namespace });
      return next();
    }
    const pending = options.resolver.resolve(secret);
    const resolution: Resolution = pending instanceof Promise ? await pending : pending;
    if ("refused" in resolution) return refuse(c, resolution.refused, options);
    const candidates = namespace === ALL_NAMESPACES ? (options.namespaces?.() ?? [DEFAULT_NAMESPACE]) : [namespace];
    if (!candidates.some((candidate) => allows(rule, resolution.caller.acl, candidate, query))) {
      return refuse(c, PERMISSION_DENIED, options, resolution.caller.token?.AccessorID);
    }
    setCaller(c, resolution.caller);
    c.set("aclRule", rule);
    return next();
  };
}

/**
 * The named segments (":id") of `routePath` as `path` fills them. A
 * middleware's c.req.param() sees only its own route's params, and the
 * guard runs before the route.
 */
function pathParams(routePath: string, path: string): (name: string) => string | undefined {
  const pattern = routePath.split("/");
  const actual = path.split("/");
  return (name) => {
    const at = pattern.indexOf(`:${name}`);
    const value = at < 0 ? undefined : actual[at];
    if (value === undefined) return undefined;
    try {
      return decodeURIComponent(value);
    } catch {
      // Malformed escapes name no object; the route answers them.
      return value;
    }
  };
}

function refuse(c: Context, reason: string, options: AclGuardOptions, accessor?: string): Response {
  options.refused?.({ method: c.req.method, path: c.req.path, reason, ...(accessor ? { accessor } : {}) });
  return c.text(reason, 403);
}
