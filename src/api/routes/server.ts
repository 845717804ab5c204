/** Every route of the embedded server, for the agent to mount in one line. */
import type { Server } from "../../server/server.ts";
import type { Routes } from "../app.ts";
import { namespaceRoutes } from "./namespaces.ts";
import { aclRoutes } from "./acl.ts";
import { allocationsRoutes } from "./allocations.ts";
import { deploymentRoutes } from "./deployments.ts";
import { eventRoutes } from "./events.ts";
import { identityRoutes } from "./identity.ts";
import { jobsRoutes } from "./jobs.ts";
import { keyringRoutes } from "./keyring.ts";
import { nodesRoutes } from "./nodes.ts";
import { nodePoolRoutes } from "./node-pools.ts";
import { scalingRoutes } from "./scaling.ts";
import { searchRoutes } from "./search.ts";
import { servicesRoutes } from "./services.ts";
import { variablesRoutes } from "./variables.ts";

/** `aclEnabled`: the ACL endpoints work (acl { enabled = true }), else they answer "ACL support disabled". */
export function serverRoutes(server: Server, aclEnabled = false): Routes[] {
  return [
    aclRoutes(server.acl, aclEnabled),
    jobsRoutes(server.jobs, server.deployments, server),
    allocationsRoutes(server.allocs, server.evals, server),
    deploymentRoutes(server.deployments, server),
    namespaceRoutes(server.namespaces, server),
    // Before the node routes: /v1/node/pools is not the node "pools".
    nodePoolRoutes(server.nodePools, server.nodes, server.jobs, server),
    nodesRoutes(server.nodes, (force) => server.collectGarbage(force), server),
    searchRoutes(server.search, server.fuzzySearch, server.variables, server),
    scalingRoutes(server.scalingPolicies, server),
    eventRoutes(server.events),
    servicesRoutes(server.services),
    variablesRoutes(server.variables),
    identityRoutes(server.identities),
    keyringRoutes(server.keyring),
  ];
}
