/**
 * The client as one of the agent's services: its drivers and its log pump
 * supervisor, assembled from the agent's config. Started
 * after the server (it registers the node there), stopped before it.
 */
import { join } from "node:path";
import { nvidiaPluginConfig, type AgentConfig } from "../config/schema.ts";
import type { DevicePlugin } from "../devices/plugin.ts";
import { NVML_LIBRARY, NVML_LIBRARY_VARIABLE, NvidiaDevicePlugin } from "../devices/nvidia/plugin.ts";
import type { DeviceGroupStats } from "../structs/device.ts";
import { detectDrivers, type DriverCatalogOptions } from "../drivers/catalog.ts";
import { loadTaskHandleJson, saveTaskHandle } from "../state/client/task-handles.ts";
import { parseStoredHandle } from "../drivers/handle.ts";
import type { NodeFingerprint } from "./fingerprint/index.ts";
import { nodeRegistration } from "./node.ts";
import type { Service } from "../lib/service.ts";
import type { Logger } from "../lib/logger.ts";
import type { PublishTaskUsage } from "../metrics/alloc.ts";
import type { ClientEndpoint } from "../structs/client-endpoint.ts";
import type { ClientState } from "../state/client/db.ts";
import { Client } from "./client.ts";
import { protectAllocRoot, releaseAllocRoot } from "./allocdir/alloc-dir.ts";
import type { ServeTaskApi } from "./taskrunner/hooks/task-api.ts";
import type { SignIdentity } from "./taskrunner/hooks/identity.ts";
import type { TemplateVariables } from "./taskrunner/hooks/template.ts";
import { LogmonClient } from "./logmon/client.ts";
import { LogmonStatus } from "./logmon/status.ts";
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
  /** Set when telemetry.publish_node_metrics asks for host gauges. */
  publishDeviceStats?: (stats: DeviceGroupStats[]) => void;
  destroyOnStop: boolean;
  /** Serves each task's API socket; the agent wires it to its HTTP API. */
  serveTaskApi?: ServeTaskApi;
  /** Signs a task's workload identity: the embedded server's, when there is one. */
  signIdentity?: SignIdentity;
  /** Variables for templates: the embedded server's, when there is one. */
  templateVariables?: TemplateVariables;
}

/** plugin "raw_exec" { config { enabled } }, or Nomad's older client option driver.raw_exec.enable. */
function rawExecEnabled(config: AgentConfig): boolean {
  const legacy = config.client.options["driver.raw_exec.enable"];
  return config.plugin.raw_exec.config.enabled || legacy === "1" || legacy === "true";
}

/** The driver options an agent config asks for. */
export function driverOptions(parts: Pick<ClientServiceParts, "config" | "node" | "dataDir" | "logger" | "state">): DriverCatalogOptions {
  const { config, node } = parts;
  return {
    // A task another executor adopted is reattached there by the next agent.
    onHandleChange: (handle) => saveTaskHandle(parts.state, { allocId: handle.allocId, taskName: handle.taskName, driver: handle.driver, handle }),
    // The drivers keep handles without it: read back when another executor adopts a task.
    storedLaunch: (allocId, taskName) => parseStoredHandle(loadTaskHandleJson(parts.state, allocId, taskName)).handle?.launch,
    runDir: join(parts.dataDir, "run"),
    cgroups: node.cgroups,
    mhzPerCore: node.resources.cpuMhz / node.resources.cores,
    tasksPerExecutor: config.client.tasks_per_executor,
    log: (line: string) => parts.logger.info({ component: "driver" }, line),
    rawExecEnabled: rawExecEnabled(config),
    chrootEnv: config.client.chroot_env,
    allowCaps: config.plugin.exec.config.allow_caps,
    allowSyscalls: config.plugin.exec.config.allow_syscalls,
    defaultPidMode: config.plugin.exec.config.default_pid_mode,
    defaultIpcMode: config.plugin.exec.config.default_ipc_mode,
    pidsLimit: config.client.pids_limit,
    docker: {
      imageDir: join(parts.dataDir, "images"),
      insecureRegistries: config.plugin.docker.config.insecure_registries,
      allowCaps: config.plugin.docker.config.allow_caps,
      allowPrivileged: config.plugin.docker.config.allow_privileged,
      authConfig: config.plugin.docker.config.auth.config,
      certsDir: config.plugin.docker.config.certs_dir,
      gc: { image: config.plugin.docker.config.gc.image, imageDelayMs: config.plugin.docker.config.gc.image_delay },
    },
  };
}

/** The built-in device plugins, as the config sets them up. */
export function devicePlugins(config: AgentConfig, logger: Logger): DevicePlugin[] {
  const nvidia = nvidiaPluginConfig(config);
  if (!nvidia.enabled) return [];
  return [
    new NvidiaDevicePlugin(
      {
        ignoredGpuIds: nvidia.ignored_gpu_ids,
        fingerprintPeriodMs: nvidia.fingerprint_period,
        library: process.env[NVML_LIBRARY_VARIABLE] || NVML_LIBRARY,
      },
      logger.child({ plugin: "nvidia" }),
    ),
  ];
}

export async function clientService(parts: ClientServiceParts): Promise<{ service: Service; client: Client; logmonStatus: LogmonStatus }> {
  const logger = parts.logger.child({ component: "client" });
  // Only root can mount; a non-root agent's tasks cannot make setuid-root files either.
  if (process.getuid?.() === 0) protectAllocRoot(parts.allocDir);
  const drivers = await detectDrivers(driverOptions(parts), (reason) => logger.warn({ reason }, "the exec driver is unavailable on this host"));
  const logmonStatus = new LogmonStatus();
  const supervisor = new LogmonSupervisor({
    stateDir: join(parts.dataDir, "logmon"),
    onEvent: (event) => {
      logmonStatus.observe(event);
      logger.info({ ...event }, `logmon ${event.kind}`);
    },
  });
  const logmon = new LogmonClient(supervisor, (task, error) => logger.warn({ task: task.id, err: error.message }, "re-registering a task with the logmon failed"));
  const client = new Client({
    config: parts.config,
    node: parts.node,
    registration: (devices) => nodeRegistration(parts.config, parts.node, parts.httpAddr, drivers, devices.devices()),
    devicePlugins: devicePlugins(parts.config, logger),
    allocRoot: parts.allocDir,
    state: parts.state,
    logger,
    endpoint: parts.endpoint,
    drivers,
    logmonSupervisor: supervisor,
    logmon,
    destroyOnStop: parts.destroyOnStop,
    ...(parts.publishTaskStats ? { publishTaskStats: parts.publishTaskStats } : {}),
    ...(parts.publishDeviceStats ? { publishDeviceStats: parts.publishDeviceStats } : {}),
    ...(parts.serveTaskApi ? { serveTaskApi: parts.serveTaskApi } : {}),
    ...(parts.signIdentity ? { signIdentity: parts.signIdentity } : {}),
    ...(parts.templateVariables ? { templateVariables: parts.templateVariables } : {}),
  });
  return {
    client,
    logmonStatus,
    service: {
      name: "client",
      start: () => client.start(),
      stop: async () => {
        await client.stop();
        if (process.getuid?.() === 0) releaseAllocRoot(parts.allocDir);
      },
    },
  };
}
