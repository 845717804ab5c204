/**
 * Nomad's second check on exec: a task whose driver leaves it the host's
 * filesystem (no isolation) is a shell on the node, so exec into it needs
 * alloc-node-exec beside alloc-exec (client/alloc_endpoint.go).
 */
import type { Caller } from "../../acl/resolver.ts";

/** Drivers whose tasks see the host's filesystem as it is. */
const UNISOLATED_DRIVERS: ReadonlySet<string> = new Set(["raw_exec"]);

export function mayExecInto(caller: Caller, target: { driver: string; namespace: string }): boolean {
  return !UNISOLATED_DRIVERS.has(target.driver) || caller.acl.allowNamespaceOperation(target.namespace, "alloc-node-exec");
}
