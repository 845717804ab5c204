/**
 * Nomad's native service catalog (Nomad 1.3+):
 *
 *   GET /v1/services          [{Namespace, Services: [{ServiceName, Tags}]}]
 *   GET /v1/service/:name     the instances: [{ID, ServiceName, Address, Port, AllocID, ...}]
 */
import type { Hono } from "hono";
import type { ServiceCatalog } from "../../server/service-catalog.ts";
import { namespaceFilter, singleNamespace } from "../acl/namespaces.ts";

export function servicesRoutes(catalog: ServiceCatalog) {
  return (app: Hono) => {
    app.get("/v1/services", (c) => {
      const shown = namespaceFilter(c);
      return c.json(catalog.list().filter((entry) => shown(entry.Namespace)));
    });
    app.get("/v1/service/:name", (c) => c.json(catalog.get(c.req.param("name"), singleNamespace(c))));
  };
}
