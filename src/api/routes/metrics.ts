/** GET /v1/metrics: Nomad's JSON by default, Prometheus text with ?format=prometheus (unless telemetry turns it off). */
import type { Hono } from "hono";
import type { Metrics } from "../../metrics/registry.ts";
import { badRequest } from "../errors.ts";

export function metricsRoutes(metrics: Metrics, prometheus = true) {
  return (app: Hono) => {
    app.get("/v1/metrics", async (c) => {
      const format = c.req.query("format");
      if (format === undefined || format === "json") return c.json(await metrics.json());
      if (format !== "prometheus") throw badRequest(`unknown format "${format}" (expected prometheus or json)`);
      if (!prometheus) throw badRequest("Prometheus metrics are turned off (telemetry.prometheus_metrics = false)");
      return c.body(await metrics.prometheus(), 200, { "Content-Type": metrics.prometheusContentType });
    });
  };
}
