/**
 * The namespace a request is about, and what the caller may see of others.
 *
 *   ?namespace=      the namespace of a list or a job route ("default" when absent)
 *   ?namespace=*     a list of every namespace the caller holds the route's right in
 *   an object by ID  (alloc, eval, deployment) its own namespace, whatever the
 *                    query says: the guard judges the rule there (guard.ts)
 *
 * A job body's Namespace is judged again by the route (requireNamespace):
 * the guard runs before any body is read.
 */
import type { Context } from "hono";
import { PERMISSION_DENIED } from "../../acl/resolver.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";
import { ALL_NAMESPACES } from "../../structs/namespace.ts";
import { ApiError } from "../errors.ts";
import { callerOf, queryView } from "./caller.ts";
import { allows, type Rule } from "./route-rules.ts";

declare module "hono" {
  interface ContextVariableMap {
    /** The rule the guard judged this request by, for checks in other namespaces. */
    aclRule: Rule;
  }
}

/** `?namespace=`, or "default" when absent (Nomad's QueryOptions.RequestNamespace). */
export function requestNamespace(c: Context): string {
  return c.req.query("namespace") || DEFAULT_NAMESPACE;
}

/** Whether the caller passes this request's rule in `namespace`; with ACLs off (no rule recorded), always. */
export function allowedIn(c: Context, namespace: string): boolean {
  const rule = c.get("aclRule");
  return rule === undefined || allows(rule, callerOf(c).acl, namespace, queryView(c));
}

/** Which namespaces a list shows: the one asked for, or with `*` every one the caller may read. */
export function namespaceFilter(c: Context): (namespace: string) => boolean {
  const asked = requestNamespace(c);
  if (asked === ALL_NAMESPACES) return (namespace) => allowedIn(c, namespace);
  return (namespace) => namespace === asked;
}

/** Refuses (403) a request about an object in `namespace` that the caller has no right in there. */
export function requireNamespace(c: Context, namespace: string): void {
  if (!allowedIn(c, namespace)) throw new ApiError(403, PERMISSION_DENIED);
}

/** A route that reads one object: `*` names no namespace to find it in. */
export function singleNamespace(c: Context): string {
  const asked = requestNamespace(c);
  if (asked === ALL_NAMESPACES) throw new ApiError(400, `namespace "${ALL_NAMESPACES}" names every namespace; name the job's own`);
  return asked;
}
