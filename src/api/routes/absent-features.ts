/**
 * Nomad features drover does not have, answered as a Nomad without them
 * answers, so Nomad's tools say what is missing instead of a bare 404:
 *
 *   /v1/plugins, /v1/volumes            [] (no CSI plugins, so no CSI volumes)
 *   /v1/plugin/csi/:id, /v1/volume/csi/:id   404
 *   /v1/sentinel/..., /v1/quota..., /v1/operator/license   501, Nomad Enterprise only
 */
import type { Hono } from "hono";
import { ApiError, notFound } from "../errors.ts";

/** Nomad's answer to an Enterprise endpoint in its open-source build. */
const ENTERPRISE_ONLY = "Nomad Enterprise only endpoint";

export function absentFeatureRoutes() {
  return (app: Hono) => {
    app.get("/v1/plugins", (c) => c.json([]));
    app.get("/v1/volumes", (c) => c.json([]));
    app.all("/v1/plugin/csi/:id", (c) => {
      throw notFound(`plugin "${c.req.param("id")}"`);
    });
    app.all("/v1/volume/csi/:id", (c) => {
      throw notFound(`volume "${c.req.param("id")}"`);
    });
    for (const path of ["/v1/sentinel/*", "/v1/quotas", "/v1/quota-usages", "/v1/quota", "/v1/quota/*", "/v1/operator/license"]) {
      app.all(path, () => {
        throw new ApiError(501, ENTERPRISE_ONLY);
      });
    }
  };
}
