/** Every route of the embedded server, for the agent to mount in one line. */
import type { Server } from "../../server/server.ts";
import type { Routes } from "../app.ts";
import { allocationsRoutes } from "./allocations.ts";
import { jobsRoutes } from "./jobs.ts";
import { nodesRoutes } from "./nodes.ts";
import { servicesRoutes } from "./services.ts";

export function serverRoutes(server: Server): Routes[] {
  return [
    jobsRoutes(server.jobs, server),
    allocationsRoutes(server.allocs, server.evals, server),
    nodesRoutes(server.nodes, (force) => server.collectGarbage(force), server),
    servicesRoutes(server.services),
  ];
}
