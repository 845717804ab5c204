/**
 * The client as one of the agent's services: its drivers, its log pump
 * supervisor, and its HTTP routes, assembled from the agent's config. Started
 * after the server (it registers the node there), stopped before it.
 */
import { join } from "node:path";
import { DEFAULT_CHROOT_ENV, type AgentConfig } from "../agent/config/schema.ts";
import type { NodeFingerprint } from "../agent/fingerprint/index.ts";
import { nodeRegistration } from "../agent/node.ts";
import type { Service } from "../agent/service.ts";
import type { Routes } from "../api/app.ts";
import { clientAllocRoutes } from "../api/routes/client-allocs.ts";
import type { DriverPlugin } from "../drivers/driver.ts";
import { ExecDriver } from "../drivers/exec.ts";
import { RawExecDriver } from "../drivers/raw-exec.ts";
import { DEFAULT_EXEC_CAPABILITIES, type CapabilityName } from "../nsenter/capabilities.ts";
import { detectIsolation, type IsolationSupport } from "../nsenter/detect.ts";
import type { Logger } from "../lib/logger.ts";
import type { PublishTaskUsage } from "../metrics/alloc.ts";
import type { ClientEndpoint } from "../server/client-endpoint.ts";
import type { ClientState } from "../state/client/db.ts";
import { Client } from "./client.ts";
import { LogmonClient } from "./logmon/client.ts";
import { LogmonSupervisor } from "./logmon/supervisor.ts";

export interface ClientServiceParts {
  config: AgentConfig;
  node: NodeFingerprint;
  dataDir: string;
  allocDir: string;
  state: ClientState;
  logger: Logger;
  endpoint: ClientEndpoint;
  /** The address the HTTP API will answer on, for the node record. */
  httpAddr: string;
  /** Set when telemetry.publish_allocation_metrics asks for per-task gauges. */
  publishTaskStats?: PublishTaskUsage;
  destroyOnStop: boolean;
}

/** plugin "raw_exec" { config { enabled } }, or Nomad's older client option driver.raw_exec.enable. */
function rawExecEnabled(config: AgentConfig): boolean {
  const legacy = config.client.options["driver.raw_exec.enable"];
  return config.plugin.raw_exec.config.enabled || legacy === "1" || legacy === "true";
}

/** Nomad's default exec set, narrowed to plugin "exec" { config { allow_caps } } when given. */
function allowedCapabilities(allow: readonly CapabilityName[] | undefined): CapabilityName[] {
  return DEFAULT_EXEC_CAPABILITIES.filter((cap) => allow === undefined || allow.includes(cap));
}

export function makeDrivers(
  parts: Pick<ClientServiceParts, "config" | "node" | "dataDir" | "logger">,
  isolation: IsolationSupport,
): Map<string, DriverPlugin> {
  const { config, node } = parts;
  const options = {
    runDir: join(parts.dataDir, "run"),
    cgroups: node.cgroups,
    mhzPerCore: node.resources.cpuMhz / node.resources.cores,
    log: (line: string) => parts.logger.info({ component: "driver" }, line),
  };
  return new Map<string, DriverPlugin>([
    ["raw_exec", new RawExecDriver({ ...options, enabled: rawExecEnabled(config) })],
    [
      "exec",
      new ExecDriver({
        ...options,
        support: isolation,
        chrootEnv: config.client.chroot_env ?? DEFAULT_CHROOT_ENV,
        capabilities: allowedCapabilities(config.plugin.exec.config.allow_caps),
      }),
    ],
  ]);
}

export async function clientService(parts: ClientServiceParts): Promise<{ service: Service; routes: Routes[]; client: Client }> {
  const logger = parts.logger.child({ component: "client" });
  const isolation = await detectIsolation();
  if (!isolation.available) logger.warn({ reason: isolation.reason }, "the exec driver is unavailable on this host");
  const drivers = makeDrivers(parts, isolation);
  const supervisor = new LogmonSupervisor({
    stateDir: join(parts.dataDir, "logmon"),
    onEvent: (event) => logger.info({ ...event }, `logmon ${event.kind}`),
  });
  const logmon = new LogmonClient(supervisor, (task, error) => logger.warn({ task: task.id, err: error.message }, "re-registering a task with the logmon failed"));
  const client = new Client({
    config: parts.config,
    node: parts.node,
    registration: () => nodeRegistration(parts.config, parts.node, parts.httpAddr, drivers),
    allocRoot: parts.allocDir,
    state: parts.state,
    logger,
    endpoint: parts.endpoint,
    drivers,
    logmonSupervisor: supervisor,
    logmon,
    destroyOnStop: parts.destroyOnStop,
    ...(parts.publishTaskStats ? { publishTaskStats: parts.publishTaskStats } : {}),
  });
  return {
    client,
    routes: clientAllocRoutes(client),
    service: { name: "client", start: () => client.start(), stop: () => client.stop() },
  };
}
