/**
 * The caller of each request, as the ACL guard resolved it, for the few
 * endpoints that narrow what they show (ACL reads, search contexts, a node's
 * allocs) and for the exec websocket, whose token may arrive in its first
 * frame. Kept on the request's Hono context (a middleware may replace the
 * Request object itself). Without ACLs every caller may do everything.
 */
import type { Context } from "hono";
import { Acl } from "../../acl/acl.ts";
import { PERMISSION_DENIED, type Caller, type TokenResolver } from "../../acl/resolver.ts";
import { allows, type QueryView, type Rule } from "./route-rules.ts";

/** A websocket's rule still to check, once its handshake frame names the token. */
export interface PendingCheck {
  rule: Rule;
  query: QueryView;
  resolver: TokenResolver;
  /** The namespace the rule is judged in (the alloc's). */
  namespace: string;
}

declare module "hono" {
  interface ContextVariableMap {
    /** Set by the ACL guard on every request it sees. */
    aclCaller: Caller;
    /** A websocket whose token comes in its handshake frame. */
    aclPendingCheck: PendingCheck;
    /** A guard before the ACL check already allowed this request (a task's own grant). */
    aclGranted: true;
  }
}

/** The caller when ACLs are off: Nomad without ACLs lets everyone do everything. */
const OPEN: Caller = { acl: Acl.management };

/** A caller whose rights are not (yet) known: it may do nothing. */
export const UNJUDGED: Caller = { acl: new Acl(false, []) };

export function setCaller(c: Context, caller: Caller): void {
  c.set("aclCaller", caller);
}

export function setPendingCheck(c: Context, check: PendingCheck): void {
  c.set("aclPendingCheck", check);
  c.set("aclCaller", UNJUDGED);
}

/**
 * Allows this request without a token: a task calling a route its own
 * grant covers (task-access.ts). Its caller holds no ACL rights beyond it.
 */
export function grantWithoutToken(c: Context): void {
  c.set("aclGranted", true);
  c.set("aclCaller", UNJUDGED);
}

export function isGranted(c: Context): boolean {
  return c.get("aclGranted") === true;
}

/** The request's query, as rules read it. */
export function queryView(c: Context): QueryView {
  return { query: (name) => c.req.query(name), queries: (name) => c.req.queries(name) ?? [] };
}

/** The judged caller; with ACLs off (no guard ran), an open one. */
export function callerOf(c: Context): Caller {
  return c.get("aclCaller") ?? OPEN;
}

/**
 * For a websocket route with a handshake rule: judges the token its first
 * frame gave. Returns the caller, or the refusal's message (Nomad's). A
 * request the guard already judged (a header token, or ACLs off) passes as
 * it was judged.
 */
export async function authorizeHandshake(c: Context, secret: string | undefined): Promise<Caller | string> {
  const check = c.get("aclPendingCheck");
  if (!check) return callerOf(c);
  const resolution = await check.resolver.resolve(secret);
  if ("refused" in resolution) return resolution.refused;
  if (!allows(check.rule, resolution.caller.acl, check.namespace, check.query)) return PERMISSION_DENIED;
  c.set("aclCaller", resolution.caller);
  return resolution.caller;
}
