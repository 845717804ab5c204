/** GET /v1/metrics: Nomad's JSON by default, Prometheus text with ?format=prometheus. */
import type { Hono } from "hono";
import type { Metrics } from "../../metrics/registry.ts";
import { badRequest } from "../errors.ts";

export function metricsRoutes(metrics: Metrics) {
  return (app: Hono) => {
    app.get("/v1/metrics", async (c) => {
      const format = c.req.query("format");
      if (format === undefined || format === "json") return c.json(await metrics.json());
      if (format !== "prometheus") throw badRequest(`unknown format "${format}" (expected prometheus or json)`);
      return c.body(await metrics.prometheus(), 200, { "Content-Type": metrics.prometheusContentType });
    });
  };
}
