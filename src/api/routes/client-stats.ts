/** GET /v1/client/stats: the host's resource usage (Nomad's HostStats). */
import type { Hono } from "hono";
import type { HostStats } from "../../stats/host.ts";

export function clientStatsRoutes(latest: () => HostStats) {
  return (app: Hono) => {
    app.get("/v1/client/stats", (c) => c.json(latest()));
  };
}
