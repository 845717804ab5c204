/**
 * The agent process: one per host.
 *
 *   load config ─> data dir ─> logger ─> state DB ─> fingerprint
 *        │ any error: message naming the file/key/path, exit 1, nothing written
 *        ▼
 *   start services in order ─────────────> running
 *     (host stats, ..., HTTP API last)        │ SIGHUP: re-read config files, apply log level
 *                                             │ SIGINT / SIGTERM
 *                                             ▼
 *                          stop services in reverse order ─> close DB ─> exit 0
 *
 * A shutdown asked for during start-up waits for start-up to end first. A
 * second SIGINT/SIGTERM during shutdown exits at once. Tasks are not the
 * agent's children and keep running; a new agent reattaches to them.
 */
import { objectNamespaces } from "../api/acl/object-namespace.ts";
import { eq } from "drizzle-orm";
import type { Logger } from "../lib/logger.ts";
import { setLogLevel, writesJson } from "../lib/logger.ts";
import type { Hono } from "hono";
import { createApp } from "../api/app.ts";
import { agentRoutes } from "../api/routes/agent.ts";
import { clientAllocRoutes } from "../api/routes/client-allocs.ts";
import { clientExecRoutes } from "../api/routes/client-exec.ts";
import { clientStatsRoutes } from "../api/routes/client-stats.ts";
import { absentFeatureRoutes } from "../api/routes/absent-features.ts";
import { clusterRoutes } from "../api/routes/cluster.ts";
import { monitorRoutes } from "../api/routes/monitor.ts";
import { metricsRoutes } from "../api/routes/metrics.ts";
import { serverRoutes } from "../api/routes/server.ts";
import { uiRoutes } from "../api/routes/ui.ts";
import { uiBundle } from "../runtime/ui-bundle.ts";
import { clientService } from "../client/lifecycle.ts";
import { HostStatsCollector } from "../stats/host.ts";
import { allocMetrics } from "../metrics/alloc.ts";
import { deviceMetrics } from "../metrics/devices.ts";
import { hostMetrics } from "../metrics/host.ts";
import { Metrics } from "../metrics/registry.ts";
import { serveHttpUnix } from "../runtime/serve.ts";
import { HttpListener, readTlsFiles } from "./http-listener.ts";
import { taskAccess, type RequestOrigin } from "../api/task-access.ts";
import { chooseSocketLookup, TaskPeers } from "../client/task-peers.ts";
import type { ServeTaskApi, TaskIdentity } from "../client/taskrunner/hooks/task-api.ts";
import { clientEndpoint } from "../server/client-endpoint.ts";
import { clientRpcs } from "../nomad-servers/client-rpcs.ts";
import { NomadServersEndpoint } from "../nomad-servers/endpoint.ts";
import { statfsFreeBytes } from "../server/disk-space.ts";
import { Server } from "../server/server.ts";
import { serverService } from "../server/lifecycle.ts";
import { gcThresholdsOf } from "./gc-thresholds.ts";
import type { ClientState } from "../state/client/db.ts";
import type { DiskReserve } from "../state/reserve.ts";
import { agentMeta } from "../state/client/schema.ts";
import { VERSION } from "../lib/version.ts";
import { loadAgentConfig, type ConfigOverrides } from "../config/load.ts";
import type { AgentConfig } from "../config/schema.ts";
import { effectiveConfig } from "../config/effective.ts";
import type { DataDir } from "./data-dir.ts";
import type { NodeFingerprint } from "../client/fingerprint/index.ts";
import { intervalService, type Service } from "../lib/service.ts";
import { DiskWatch } from "./disk-watch.ts";
import { collectGarbage } from "../runtime/gc.ts";
import { heapReleaseService } from "./heap-release.ts";

/**
 * How often the agent collects its garbage in full: a collection of the heap
 * of a thousand tasks takes 10-30 ms, so this costs well under 1 % of a core,
 * and bounds the garbage to what ten seconds of work make.
 */
export const HEAP_COLLECT_INTERVAL_MS = 10_000;

export interface AgentParts {
  config: AgentConfig;
  overrides: ConfigOverrides;
  dataDir: DataDir;
  logger: Logger;
  state: ClientState;
  /** The data dir's disk reserve (state/reserve.ts), shared by both state databases. */
  reserve: DiskReserve;
  node: NodeFingerprint;
}

export class Agent {
  private config: AgentConfig;
  private readonly services: Service[] = [];
  private started: Service[] = [];
  private http: HttpListener | undefined;
  private app: Hono | undefined;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private readonly startedAt = new Date();

  constructor(private readonly parts: AgentParts) {
    this.config = parts.config;
  }

  get logger(): Logger {
    return this.parts.logger;
  }

  /** Every route the HTTP API serves (method and path pattern), once started: what route-wide checks walk. */
  get routes(): { method: string; path: string }[] {
    return this.app?.routes.map(({ method, path }) => ({ method, path })) ?? [];
  }

  /** Where the HTTP API listens, once started. */
  get address(): { hostname: string; port: number } | undefined {
    return this.http && { hostname: this.http.hostname, port: this.http.port };
  }

  start(): Promise<void> {
    this.starting ??= this.doStart();
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const { logger, node, dataDir, state } = this.parts;
    const previous = lastAgentVersion(state);
    if (previous !== undefined && previous !== VERSION) {
      logger.info({ from: previous, to: VERSION }, "state database was last used by another drover version");
    }
    state.db
      .insert(agentMeta)
      .values({ key: "last_version", value: VERSION })
      .onConflictDoUpdate({ target: agentMeta.key, set: { value: VERSION } })
      .run();

    // Unreadable certificates stop start-up before anything runs; the listener serves what was read here.
    const tlsFiles = readTlsFiles(this.config.tls);
    const metrics = new Metrics({ node_id: node.id, datacenter: this.config.datacenter });
    const hostStats = new HostStatsCollector(dataDir.allocDir, node.resources.cpuMhz / node.resources.cores);
    const publishHost = this.config.telemetry.publish_node_metrics ? hostMetrics(metrics) : () => {};
    publishHost(hostStats.latest());
    this.services.push(
      intervalService("host-stats", this.config.telemetry.collection_interval, () => publishHost(hostStats.sample())),
    );

    // Measured (bench/scale.ts, alternating builds with and without, twice): the agent's
    // median memory with 1000 tasks was 86-88 MiB PSS with this, 102-117 MiB without.
    this.services.push(intervalService("heap", HEAP_COLLECT_INTERVAL_MS, collectGarbage));
    this.services.push(heapReleaseService());

    const diskWatch = new DiskWatch(dataDir.root, this.parts.reserve, statfsFreeBytes(dataDir.root), logger);
    diskWatch.check();
    this.services.push(diskWatch.service());

    const { acl } = this.config;
    const server = this.config.server.enabled
      ? Server.open({
          dataDir: dataDir.root,
          region: this.config.region,
          reserve: this.parts.reserve,
          ...(this.config.server.oidc_issuer ? { oidcIssuer: this.config.server.oidc_issuer } : {}),
          aclTokenLifetimes: { minTtlMs: acl.token_min_expiration_ttl, maxTtlMs: acl.token_max_expiration_ttl },
          gcThresholds: gcThresholdsOf(this.config.server),
        })
      : undefined;
    if (server) this.services.push(serverService(server, logger, this.config.server.job_gc_interval));
    const hostname = this.config.addresses.http ?? this.config.bind_addr;
    // The app answers on the TCP address and on each task's API socket; it exists before any task starts.
    // One HTTP server for every task's socket: a request carries the task its socket was made for.
    const taskSockets = serveHttpUnix<TaskIdentity>((request, connection, task) => this.app!.fetch(request, { connection, task } satisfies RequestOrigin));
    const serveTaskApi: ServeTaskApi = (path, task) => taskSockets.listen(path, task);
    const remote = server ? undefined : this.remoteEndpoint();
    const endpoint = server ? clientEndpoint(server) : remote;
    const client =
      endpoint && this.config.client.enabled
        ? await clientService({
            config: this.config,
            node,
            dataDir: dataDir.root,
            allocDir: dataDir.allocDir,
            state,
            logger,
            endpoint,
            httpAddr: advertisedHttp(this.config.advertise.http, hostname, this.config.ports.http),
            destroyOnStop: dataDir.temporary,
            serveTaskApi,
            ...(server
              ? {
                  signIdentity: (allocId, task, spec) => server.identities.signFor(allocId, task, spec),
                  // Templates read variables as their task's workload identity would.
                  templateVariables: {
                    read: async (alloc, task, path) => server.variables.read(server.identities.callerOf(alloc, task, acl.enabled), alloc.Namespace, path)?.Items ?? undefined,
                    list: async (alloc, task, prefix) =>
                      server.variables.list(server.identities.callerOf(alloc, task, acl.enabled), { namespace: alloc.Namespace, prefix, perPage: 0, nextToken: "", reverse: false }).variables,
                  },
                }
              : {}),
            ...(this.config.telemetry.publish_allocation_metrics ? { publishTaskStats: allocMetrics(metrics) } : {}),
            ...(this.config.telemetry.publish_node_metrics ? { publishDeviceStats: deviceMetrics(metrics) } : {}),
          })
        : undefined;
    if (client) this.services.push(client.service);
    const deviceStats = () => {
      const groups = client?.client.devices.hostStats() ?? [];
      return groups.length > 0 ? groups : null;
    };

    const sockets = chooseSocketLookup();
    // Said once, at start: without it, tasks could not be told from operators and nobody would know why.
    if (sockets.missing && this.config.client.enabled) logger.warn(sockets.missing);
    const peers = new TaskPeers(node.cgroups, this.config.client.cgroup_parent, sockets.lookup);
    const guard = taskAccess({
      aclEnabled: acl.enabled,
      identifyPeer: (remote, local) => peers.identify(remote, local),
      refused: ({ why, caller }, method, path) => {
        if (caller === "gone") logger.debug({ method, path, why }, "refused a request whose caller has gone");
        else logger.warn({ method, path, why }, caller === "task" ? "refused a request from a task" : "refused a request from an unidentified caller on this host");
      },
    });
    const app = (this.app = createApp(logger, [
      agentRoutes({
        config: () =>
          effectiveConfig(this.config, {
            dataDir: dataDir.root,
            allocDir: dataDir.allocDir,
            stateDir: dataDir.clientDir,
            nodeName: node.name,
            // The agent's logger writes to stderr.
            logJson: writesJson({ json: this.config.log_json }),
          }),
        dataDir: dataDir.root,
        node,
        startedAt: this.startedAt,
        health: () => ({
          ...(client ? { client: client.client.health() } : {}),
          ...(server ? { server: server.isClosed ? { ok: false, message: "shutting down" } : { ok: true, message: "ok" } } : {}),
          disk: diskWatch.health,
        }),
        clientStats: () => ({ cgroup_mode: node.cgroups.mode }),
        ...(client ? { subsystemStats: () => ({ logmon: client.logmonStatus.stats() }) } : {}),
      }),
      clusterRoutes(() => this.config, node.name, () => server?.index ?? 0),
      absentFeatureRoutes(),
      monitorRoutes(logger),
      clientStatsRoutes(() => ({ ...hostStats.latest(), DeviceStats: deviceStats() })),
      metricsRoutes(metrics, this.config.telemetry.prometheus_metrics),
      ...(server ? serverRoutes(server, acl.enabled) : []),
      ...(client ? [...clientAllocRoutes(client.client), clientExecRoutes(client.client, logger)] : []),
      uiRoutes(uiBundle),
    ], {
      guards: [guard],
      ...(server && acl.enabled
        ? {
            acl: {
              resolver: server.identities,
              refused: (refusal) => logger.debug({ component: "acl", ...refusal }, "request refused"),
              objectNamespace: objectNamespaces({
                alloc: (id) => server.namespaceOf("alloc", id),
                evaluation: (id) => server.namespaceOf("evaluation", id),
                deployment: (id) => server.namespaceOf("deployment", id),
              }),
              namespaces: () => server.namespaces.list().map((namespace) => namespace.Name),
            },
          }
        : {}),
    }));
    // What a Nomad server forwards to this node (alloc fs listings, stats, restarts) is answered by the same routes.
    remote?.serveClientRpcs(clientRpcs(async (request) => app.fetch(request)));

    for (const service of this.services) {
      await service.start();
      this.started.push(service);
    }
    this.http = new HttpListener(
      (request, connection, runtime) => app.fetch(request, { connection, server: runtime } satisfies RequestOrigin),
      hostname,
      this.config.ports.http,
      tlsFiles,
    );
    logger.info(
      { node_id: node.id, data_dir: dataDir.root, http: `${this.http.hostname}:${this.http.port}`, tls: this.http.isTls, acl: acl.enabled, cgroups: node.cgroups.mode },
      "agent started",
    );
    logger.info({ ui: this.http.uiUrl }, `web UI at ${this.http.uiUrl}`);
  }

  /** client.servers: the remote Nomad servers as the client's endpoint, closed after the client stops. */
  private remoteEndpoint(): NomadServersEndpoint | undefined {
    if (this.config.client.servers.length === 0) return undefined;
    const endpoint = new NomadServersEndpoint({
      servers: this.config.client.servers,
      region: this.config.region,
      secretId: this.parts.node.secretId,
      logger: this.parts.logger.child({ component: "nomad-servers" }),
    });
    this.services.push({ name: "nomad-servers", start: () => undefined, stop: () => endpoint.close() });
    return endpoint;
  }

  /**
   * SIGHUP: re-read the config files. The log level and the HTTP API's TLS
   * (renewed certificates, TLS turned on or off) change while running; the
   * rest waits for a restart.
   */
  async reload(): Promise<void> {
    let config: AgentConfig;
    try {
      ({ config } = await loadAgentConfig(this.parts.overrides));
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, "reload failed; keeping the running configuration");
      return;
    }
    setLogLevel(this.logger, config.log_level);
    this.config = { ...this.config, log_level: config.log_level };
    if (config.acl.enabled !== this.config.acl.enabled) this.logger.warn({ acl: config.acl.enabled }, "acl.enabled changes only when the agent restarts");
    if (this.http && (config.tls.http || this.http.isTls)) {
      try {
        this.http.reload(config.tls);
        this.config = { ...this.config, tls: config.tls };
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, "TLS reload failed; the HTTP API keeps its certificates");
      }
    }
    this.logger.info({ tls: this.http?.isTls ?? false, log_level: config.log_level }, "configuration reloaded");
  }

  shutdown(): Promise<void> {
    this.stopping ??= this.doShutdown();
    return this.stopping;
  }

  private async doShutdown(): Promise<void> {
    this.logger.info("shutting down");
    // A signal during start-up: let start finish (or fail) first, or what it starts after this point would outlive the shutdown.
    await this.starting?.catch(() => undefined);
    await this.http?.stop();
    for (const service of this.started.reverse()) {
      try {
        await service.stop();
      } catch (err) {
        this.logger.error({ err, service: service.name }, "service did not stop cleanly");
      }
    }
    this.started = [];
    this.parts.state.raw.close();
    this.parts.dataDir.discard();
    this.logger.info("shutdown complete");
  }
}

/** The node's HTTPAddr: advertise.http (its port defaulting to ports.http), else the address the API binds. */
export function advertisedHttp(advertise: string | undefined, hostname: string, port: number): string {
  if (advertise === undefined) return `${hostname}:${port}`;
  return /:\d+$/.test(advertise) ? advertise : `${advertise}:${port}`;
}

/** The last version that opened this state DB, or undefined for a new one. */
export function lastAgentVersion(state: ClientState): string | undefined {
  return state.db.select().from(agentMeta).where(eq(agentMeta.key, "last_version")).get()?.value;
}
