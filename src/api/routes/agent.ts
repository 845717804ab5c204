/**
 * The agent's own endpoints, in Nomad's shapes:
 *
 *   GET /v1/agent/self      {config, member, stats}: Nomad's Config field names, this agent as its
 *                           cluster's one server member, stats per subsystem (all strings;
 *                           drover adds `logmon`, its log pump's state)
 *   GET /v1/agent/members   the servers: this agent (Nomad's ServerMembersResponse)
 *   GET /v1/agent/servers   the servers the client talks to: this agent
 *   GET /v1/agent/health    per part; an entry that is not ok makes it a 500
 *   PUT /v1/agent/join?address=...       {num_joined: 0, error}: a lone server joins no one
 *   PUT /v1/agent/force-leave?node=...   200, nothing to remove (no gossip members but itself)
 *
 * join and force-leave are a server's: without the embedded server they are
 * Nomad's 501 "Invalid method".
 *
 * drover is one process that is server and client at once, with no RPC or
 * gossip port: where Nomad gives a server's RPC address, drover gives its
 * HTTP address, so `nomad server members` marks it as its region's leader.
 */
import { arch, cpus, type as osType } from "node:os";
import type { Hono } from "hono";
import * as v from "valibot";
import type { NodeFingerprint } from "../../client/fingerprint/index.ts";
import type { AgentConfig } from "../../config/schema.ts";
import { COMMIT, VERSION } from "../../lib/version.ts";
import { runtimeVersion } from "../../runtime/detect.ts";
import { GoBool } from "../../structs/common.ts";
import { WRITE } from "../acl/route-rules.ts";
import { ApiError, badRequest } from "../errors.ts";

/** Nomad's ErrInvalidMethod, its answer to a server-only endpoint on an agent without a server. */
const INVALID_METHOD = "Invalid method";

export interface AgentRouteDeps {
  /** The config as applied (config/effective.ts): data, alloc and state dirs, node name and log format filled in. */
  config: () => AgentConfig;
  dataDir: string;
  node: NodeFingerprint;
  startedAt: Date;
  /** Per-subsystem health; an entry that is not ok turns the response into a 500. */
  health: () => Record<string, { ok: boolean; message: string }>;
  clientStats: () => Record<string, string>;
  /** More subsystems' stats (the log pump's), each a map of strings as Nomad's are. */
  subsystemStats?: () => Record<string, Record<string, string>>;
}

/** The address other parts of a cluster would reach this agent on: its HTTP address (a wildcard bind answers on loopback). */
export function agentAddress(config: AgentConfig): { host: string; port: number } {
  const host = config.addresses.http ?? config.bind_addr;
  return { host: ["0.0.0.0", "::", ""].includes(host) ? "127.0.0.1" : host, port: config.ports.http };
}

/** Nomad's serf protocol numbers for a current server; clients only display them. */
const PROTOCOL = { ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4 };

/** This agent as a member of its (one-server) cluster: Nomad's AgentMember. */
export function agentMember(config: AgentConfig, node: NodeFingerprint) {
  const { host, port } = agentAddress(config);
  return {
    Name: `${node.name}.${config.region}`,
    Addr: host,
    Port: port,
    Tags: {
      role: "nomad",
      region: config.region,
      dc: config.datacenter,
      build: VERSION,
      port: String(port),
      id: node.id,
      bootstrap: "1",
      expect: "1",
      vsn: "1",
      mvn: "1",
      rpc_addr: host,
    },
    Status: "alive",
    ...PROTOCOL,
  };
}

const ms = (value: number) => value * 1_000_000;

/** The applied configuration under Nomad's Config field names (durations in nanoseconds, as Go encodes them). */
function nomadConfig(config: AgentConfig, dataDir: string, node: NodeFingerprint) {
  const { client, telemetry } = config;
  const { port } = agentAddress(config);
  return {
    Region: config.region,
    Datacenter: config.datacenter,
    NodeName: config.name ?? node.name,
    DataDir: config.data_dir ?? dataDir,
    LogLevel: config.log_level,
    LogJson: config.log_json,
    BindAddr: config.bind_addr,
    EnableDebug: false,
    Ports: { HTTP: config.ports.http, RPC: port, Serf: port },
    Addresses: { HTTP: config.addresses.http ?? config.bind_addr, RPC: config.bind_addr, Serf: config.bind_addr },
    Client: {
      Enabled: client.enabled,
      StateDir: client.state_dir ?? `${dataDir}/client`,
      AllocDir: client.alloc_dir ?? `${dataDir}/alloc`,
      Servers: [],
      NodeClass: client.node_class,
      Options: client.options,
      Meta: client.meta,
      CpuCompute: client.cpu_total_compute ?? 0,
      MemoryMB: client.memory_total_mb ?? 0,
      MaxKillTimeout: `${client.max_kill_timeout / 1000}s`,
      Reserved: { CPU: client.reserved.cpu, MemoryMB: client.reserved.memory, DiskMB: client.reserved.disk, ReservedPorts: client.reserved.reserved_ports },
      GCInterval: ms(client.gc_interval),
      GCDiskUsageThreshold: client.gc_disk_usage_threshold,
      GCInodeUsageThreshold: client.gc_inode_usage_threshold,
      GCMaxAllocs: client.gc_max_allocs,
      MinDynamicPort: client.min_dynamic_port,
      MaxDynamicPort: client.max_dynamic_port,
      NetworkInterface: client.network_interface ?? "",
      ChrootEnv: client.chroot_env ?? null,
      CgroupParent: client.cgroup_parent,
    },
    Server: { Enabled: config.server.enabled, BootstrapExpect: 1 },
    ACL: { Enabled: config.acl.enabled },
    TLSConfig: {
      EnableHTTP: config.tls.http,
      EnableRPC: false,
      CAFile: config.tls.ca_file ?? "",
      CertFile: config.tls.cert_file ?? "",
      KeyFile: config.tls.key_file ?? "",
      VerifyHTTPSClient: config.tls.verify_https_client,
      TLSMinVersion: config.tls.tls_min_version,
    },
    Vault: { Enabled: false },
    Telemetry: {
      CollectionInterval: `${telemetry.collection_interval / 1000}s`,
      PublishAllocationMetrics: telemetry.publish_allocation_metrics,
      PublishNodeMetrics: telemetry.publish_node_metrics,
      PrometheusMetrics: telemetry.prometheus_metrics,
    },
    Plugins: Object.entries(config.plugin).map(([name, plugin]) => ({ Name: name, Args: null, Config: plugin.config })),
    Version: { Version: VERSION, Revision: COMMIT, VersionPrerelease: "", VersionMetadata: "" },
  };
}

export function agentRoutes(deps: AgentRouteDeps) {
  return (app: Hono) => {
    app.get("/v1/agent/self", (c) => {
      const config = deps.config();
      const { host, port } = agentAddress(config);
      const uptime = String(Math.floor((Date.now() - deps.startedAt.getTime()) / 1000));
      return c.json({
        config: nomadConfig(config, deps.dataDir, deps.node),
        member: agentMember(config, deps.node),
        stats: {
          agent: { version: VERSION, revision: COMMIT, uptime_seconds: uptime },
          runtime: {
            arch: arch(),
            os: osType().toLowerCase(),
            cpu_count: String(cpus().length),
            version: runtimeVersion,
            heap_bytes: String(process.memoryUsage().heapUsed),
          },
          ...(config.server.enabled
            ? {
                nomad: { server: "true", leader: "true", leader_addr: `${host}:${port}`, bootstrap: "true", known_regions: "1" },
                raft: { state: "Leader", num_peers: "0" },
              }
            : {}),
          client: {
            node_id: deps.node.id,
            known_servers: config.server.enabled ? "1" : "0",
            ...deps.clientStats(),
          },
          ...deps.subsystemStats?.(),
        },
      });
    });

    app.get("/v1/agent/members", (c) => {
      const config = deps.config();
      return c.json({
        ServerName: deps.node.name,
        ServerRegion: config.region,
        ServerDC: config.datacenter,
        Members: config.server.enabled ? [agentMember(config, deps.node)] : [],
      });
    });

    app.get("/v1/agent/servers", (c) => {
      const config = deps.config();
      const { host, port } = agentAddress(config);
      return c.json(config.server.enabled ? [`${host}:${port}`] : []);
    });

    // A server alone in its cluster (command/agent/agent_endpoint.go): Nomad's answers when there is no one to join or eject.
    app.on(WRITE, "/v1/agent/join", (c) => {
      if (!deps.config().server.enabled) throw new ApiError(501, INVALID_METHOD);
      const addresses = c.req.queries("address") ?? [];
      if (addresses.length === 0) throw badRequest("missing address to join");
      return c.json({ num_joined: 0, error: `drover's server runs alone and joins no other server (asked: ${addresses.join(", ")})` });
    });
    app.on(WRITE, "/v1/agent/force-leave", (c) => {
      if (!deps.config().server.enabled) throw new ApiError(501, INVALID_METHOD);
      if (!c.req.query("node")) throw badRequest("missing node to force leave");
      const prune = c.req.query("prune");
      if (prune !== undefined && prune !== "" && !v.is(GoBool, prune)) throw badRequest("invalid prune value");
      return c.body(null, 200);
    });

    app.get("/v1/agent/health", (c) => {
      const health = deps.health();
      const ok = Object.values(health).every((entry) => entry.ok);
      return c.json(health, ok ? 200 : 500);
    });
  };
}
