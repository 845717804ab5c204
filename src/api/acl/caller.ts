/**
 * The caller of each request, as the ACL guard resolved it, for the few
 * endpoints that narrow what they show (ACL reads, search contexts, a node's
 * allocs) and for the exec websocket, whose token may arrive in its first
 * frame. Without ACLs every caller may do everything.
 */
import type { Context } from "hono";
import { Acl } from "../../acl/acl.ts";
import { PERMISSION_DENIED, type Caller, type TokenResolver } from "../../acl/resolver.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";
import { allows, type QueryView, type Rule } from "./route-rules.ts";

/** The caller when ACLs are off: Nomad without ACLs lets everyone do everything. */
const OPEN: Caller = { acl: Acl.management };

/** Until a websocket's handshake is judged, its caller may do nothing. */
const UNJUDGED: Caller = { acl: new Acl(false, []) };

/** A websocket's rule still to check, once its handshake frame names the token. */
export interface PendingCheck {
  rule: Rule;
  query: QueryView;
  resolver: TokenResolver;
}

const callers = new WeakMap<Request, Caller>();
const pending = new WeakMap<Request, PendingCheck>();

export function setCaller(c: Context, caller: Caller): void {
  callers.set(c.req.raw, caller);
}

export function setPendingCheck(c: Context, check: PendingCheck): void {
  pending.set(c.req.raw, check);
  callers.set(c.req.raw, UNJUDGED);
}

/** The request's query, as rules read it. */
export function queryView(c: Context): QueryView {
  return { query: (name) => c.req.query(name), queries: (name) => c.req.queries(name) ?? [] };
}

export function callerOf(c: Context): Caller {
  return callers.get(c.req.raw) ?? OPEN;
}

/**
 * For a websocket route with a handshake rule: judges the token its first
 * frame gave. Returns the caller, or the refusal's message (Nomad's). A
 * request the guard already judged (a header token, or ACLs off) passes as
 * it was judged.
 */
export async function authorizeHandshake(c: Context, secret: string | undefined): Promise<Caller | string> {
  const check = pending.get(c.req.raw);
  if (!check) return callerOf(c);
  const resolution = await check.resolver.resolve(secret);
  if ("refused" in resolution) return resolution.refused;
  if (!allows(check.rule, resolution.caller.acl, DEFAULT_NAMESPACE, check.query)) return PERMISSION_DENIED;
  pending.delete(c.req.raw);
  setCaller(c, resolution.caller);
  return resolution.caller;
}
