/**
 * Who is calling: a request's token secret resolved to the token and the ACL
 * its policies compile to. The API depends only on this interface, so the
 * embedded server's tokens (src/server/acl/) and a Nomad cluster's (where
 * the servers own ACLs) plug in the same way.
 */
import type { Acl, WorkloadClaim } from "./acl.ts";
import type { AclTokenStub } from "./structs.ts";

export interface Caller {
  acl: Acl;
  /** The caller's token; absent for a request without one (the anonymous policy), or for a workload. */
  token?: AclTokenStub;
  /** A task calling with its workload identity: who it is, for the access Nomad gives a task implicitly. */
  claim?: WorkloadClaim;
}

/** Nomad's messages, word for word; both are 403s. */
export const TOKEN_NOT_FOUND = "ACL token not found";
export const TOKEN_EXPIRED = "ACL token expired";
export const PERMISSION_DENIED = "Permission denied";

export type Resolution = { caller: Caller } | { refused: typeof TOKEN_NOT_FOUND | typeof TOKEN_EXPIRED };

export interface TokenResolver {
  /** The caller holding `secret`; undefined or "" is the anonymous caller. */
  resolve(secret: string | undefined): Resolution | Promise<Resolution>;
}
