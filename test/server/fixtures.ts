/**
 * Fixtures for server tests: a node registration, job documents, and a
 * server on a temporary data dir that acts as its own client.
 */
import { randomUUID } from "node:crypto";
import { Server, type ServerOptions } from "../../src/server/server.ts";
import type { Allocation } from "../../src/structs/alloc.ts";
import type { NodeRegistration } from "../../src/structs/node.ts";
import { tempDir } from "../helpers/index.ts";

export function testNode(overrides: Partial<NodeRegistration> = {}): NodeRegistration {
  return {
    ID: randomUUID(),
    Name: "test-node",
    Datacenter: "dc1",
    NodeClass: "",
    NodePool: "default",
    HTTPAddr: "127.0.0.1:4646",
    TLSEnabled: false,
    Attributes: { "kernel.name": "linux" },
    Meta: {},
    Drivers: {
      raw_exec: { Detected: true, Healthy: true, HealthDescription: "Healthy", Attributes: {} },
      exec: { Detected: true, Healthy: true, HealthDescription: "Healthy", Attributes: {} },
    },
    HostVolumes: {},
    NodeResources: {
      Cpu: { CpuShares: 4000, TotalCpuCores: 2 },
      Memory: { MemoryMB: 4096 },
      Disk: { DiskMB: 10_000 },
      Networks: [{ Mode: "host", Device: "lo", CIDR: "127.0.0.1/32", IP: "127.0.0.1" }],
      MinDynamicPort: 20000,
      MaxDynamicPort: 32000,
      Devices: [],
    },
    ReservedResources: { Cpu: { CpuShares: 0 }, Memory: { MemoryMB: 0 }, Disk: { DiskMB: 0 }, Networks: { ReservedHostPorts: "" } },
    Status: "ready",
    StatusDescription: "",
    SchedulingEligibility: "eligible",
    ...overrides,
  };
}

/** A job-level update block that turns deployments off: every alloc is replaced at once. */
export const ALL_AT_ONCE = { MaxParallel: 0 };

/**
 * A minimal API-JSON job: one group of `count` raw_exec sleep tasks. A
 * service job gets Nomad's default update block (rolling, one at a time)
 * unless `update` says otherwise.
 */
export function testJob(
  id: string,
  overrides: { count?: number; memory?: number; cpu?: number; ports?: unknown; groups?: string[]; type?: string; meta?: Record<string, string>; update?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const groups = overrides.groups ?? ["web"];
  return {
    ID: id,
    Type: overrides.type ?? "service",
    Datacenters: ["dc1"],
    ...(overrides.meta ? { Meta: overrides.meta } : {}),
    ...(overrides.update ? { Update: overrides.update } : {}),
    TaskGroups: groups.map((name) => ({
      Name: name,
      Count: overrides.count ?? 1,
      ...(overrides.ports ? { Networks: [overrides.ports] } : {}),
      Tasks: [
        {
          Name: "srv",
          Driver: "raw_exec",
          Config: { command: "/bin/sleep", args: ["600"] },
          Resources: { CPU: overrides.cpu ?? 100, MemoryMB: overrides.memory ?? 64 },
        },
      ],
    })),
  };
}

export function openTestServer(options: Partial<ServerOptions> = {}): { server: Server; dataDir: string } {
  const dataDir = options.dataDir ?? tempDir("drover-server-");
  const server = Server.open({ dataDir, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12, ...options });
  return { server, dataDir };
}

/** A server with one registered node, and what tests of its scheduling read and report about that node. */
export function oneNodeServer() {
  const { server, dataDir } = openTestServer();
  const node = testNode();
  server.nodes.upsert(node);
  const allocsOf = (jobId: string) => server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === jobId);
  /** The client's report of each alloc's status. */
  const report = (allocs: readonly Allocation[], status: "running" | "complete" | "failed") =>
    server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: status })));
  return { server, node, dataDir, allocsOf, report };
}
