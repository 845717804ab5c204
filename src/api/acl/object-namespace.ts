/**
 * Which namespace the guard judges a request in when the route itself says
 * it (guard.ts): an alloc, eval or deployment addressed by ID is judged in
 * its own namespace, as Nomad's endpoints judge the object they read; a job
 * in a request body is judged by the route once the body is read, so the
 * guard lets through a caller with the right in any namespace.
 */
import { ALL_NAMESPACES } from "../../structs/namespace.ts";

export interface NamespaceLookups {
  alloc(id: string): string | undefined;
  evaluation(id: string): string | undefined;
  deployment(id: string): string | undefined;
}

/** Routes whose job (and so namespace) is in the body; the route calls requireNamespace (namespaces.ts). */
const JOB_IN_BODY = new Set(["/v1/jobs", "/v1/job/:id", "/v1/job/:id/plan", "/v1/validate/job"]);

/** The guard's objectNamespace for the server's routes. */
export function objectNamespaces(lookups: NamespaceLookups) {
  return (method: string, routePath: string, param: (name: string) => string | undefined): string | undefined => {
    const id = param("id") ?? param("alloc_id");
    if (JOB_IN_BODY.has(routePath) && (method === "PUT" || method === "POST")) return ALL_NAMESPACES;
    if (routePath === "/v1/namespace/:name" && method === "GET") return param("name");
    if (id === undefined) return undefined;
    if (routePath.startsWith("/v1/allocation/") || routePath.startsWith("/v1/client/allocation/") || routePath.startsWith("/v1/client/fs/")) return lookups.alloc(id);
    if (routePath.startsWith("/v1/evaluation/")) return lookups.evaluation(id);
    if (routePath.startsWith("/v1/deployment/")) return lookups.deployment(id);
    return undefined;
  };
}
