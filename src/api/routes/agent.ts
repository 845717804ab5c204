/** GET /v1/agent/self and /v1/agent/health. */
import { arch, cpus, type as osType } from "node:os";
import type { Hono } from "hono";
import type { AgentConfig } from "../../config/schema.ts";
import type { NodeFingerprint } from "../../client/fingerprint/index.ts";
import { runtimeVersion } from "../../runtime/detect.ts";
import { COMMIT, VERSION } from "../../lib/version.ts";

export interface AgentRouteDeps {
  config: () => AgentConfig;
  dataDir: string;
  node: NodeFingerprint;
  startedAt: Date;
  /** Per-subsystem health; an entry that is not ok turns the response into a 500. */
  health: () => Record<string, { ok: boolean; message: string }>;
  clientStats: () => Record<string, string>;
}

export function agentRoutes(deps: AgentRouteDeps) {
  return (app: Hono) => {
    app.get("/v1/agent/self", (c) => {
      const config = deps.config();
      return c.json({
        config: {
          ...config,
          data_dir: deps.dataDir,
          Version: { Version: VERSION, Revision: COMMIT, VersionPrerelease: "" },
        },
        member: { Name: deps.node.name, Addr: config.bind_addr, Port: config.ports.http, Status: "alive" },
        stats: {
          agent: { version: VERSION, revision: COMMIT, uptime_seconds: String(Math.floor((Date.now() - deps.startedAt.getTime()) / 1000)) },
          runtime: {
            arch: arch(),
            os: osType().toLowerCase(),
            cpu_count: String(cpus().length),
            version: runtimeVersion,
            heap_bytes: String(process.memoryUsage().heapUsed),
          },
          client: { node_id: deps.node.id, ...deps.clientStats() },
        },
      });
    });

    app.get("/v1/agent/health", (c) => {
      const health = deps.health();
      const ok = Object.values(health).every((entry) => entry.ok);
      return c.json(health, ok ? 200 : 500);
    });
  };
}
