/**
 * This host as a node of the embedded server (Nomad's structs.Node): the
 * fingerprint, the drivers the config enables, the host volumes, the device plugins' devices,
 * capacity less reservations, the dynamic port range, and the address tasks'
 * ports are bound on.
 */
import { networkInterfaces } from "node:os";
import type { DriverPlugin } from "../drivers/driver.ts";
import type { NodeDeviceResource } from "../structs/device.ts";
import type { NodeRegistration } from "../structs/node.ts";
import { ConfigError } from "../config/load.ts";
import type { AgentConfig } from "../config/schema.ts";
import type { NodeFingerprint } from "./fingerprint/index.ts";

const WILDCARD = new Set(["0.0.0.0", "::", ""]);

/** The IPv4 address tasks' ports are bound on: client.network_interface's, bind_addr, or the first non-loopback one. */
function nodeAddress(config: AgentConfig): { ip: string; device: string } {
  const interfaces = networkInterfaces();
  const named = config.client.network_interface;
  if (named !== undefined) {
    const address = interfaces[named]?.find((entry) => entry.family === "IPv4");
    if (!address) throw new ConfigError(`client.network_interface "${named}" has no IPv4 address`);
    return { ip: address.address, device: named };
  }
  for (const [device, addresses] of Object.entries(interfaces)) {
    for (const address of addresses ?? []) {
      if (address.family !== "IPv4") continue;
      if (address.address === config.bind_addr || (WILDCARD.has(config.bind_addr) && !address.internal)) return { ip: address.address, device };
    }
  }
  return { ip: "127.0.0.1", device: "lo" };
}

/**
 * The node's HTTPAddr as other hosts must dial it: an API bound to every
 * interface is advertised at the node's own address (as Nomad advertises its
 * first private IP), since "0.0.0.0:4646" reaches no other host.
 */
export function reachableHttpAddr(httpAddr: string, nodeIp: string): string {
  const at = httpAddr.lastIndexOf(":");
  const host = httpAddr.slice(0, at).replace(/^\[|\]$/g, "");
  return WILDCARD.has(host) ? `${nodeIp}${httpAddr.slice(at)}` : httpAddr;
}

/** Every driver Nomad users may name; those this node lacks are reported undetected. */
const KNOWN_DRIVERS = ["raw_exec", "exec", "docker"] as const;

export function nodeRegistration(
  config: AgentConfig,
  node: NodeFingerprint,
  httpAddr: string,
  drivers: ReadonlyMap<string, DriverPlugin>,
  devices: NodeDeviceResource[],
): NodeRegistration {
  // The config loader has checked reserved_ports and the dynamic port range.
  const { reserved } = config.client;
  const address = nodeAddress(config);
  const fingerprints = Object.fromEntries(
    KNOWN_DRIVERS.map((name) => [name, drivers.get(name)?.fingerprint() ?? { detected: false, healthy: false, description: "not available in this build", attributes: {} }]),
  );
  const driverAttributes = Object.assign({}, ...Object.values(fingerprints).map((f) => (f.detected && f.healthy ? f.attributes : {})));
  return {
    ID: node.id,
    Name: node.name,
    Datacenter: config.datacenter,
    NodeClass: config.client.node_class,
    NodePool: config.client.node_pool,
    HTTPAddr: reachableHttpAddr(httpAddr, address.ip),
    TLSEnabled: config.tls.http,
    Attributes: { ...node.attributes, ...driverAttributes },
    Meta: config.client.meta,
    Drivers: Object.fromEntries(
      Object.entries(fingerprints).map(([name, f]) => [
        name,
        { Detected: f.detected, Healthy: f.detected && f.healthy, HealthDescription: f.description, Attributes: f.attributes },
      ]),
    ),
    HostVolumes: node.hostVolumes,
    NodeResources: {
      Cpu: { CpuShares: node.resources.cpuMhz, TotalCpuCores: node.resources.cores },
      Memory: { MemoryMB: node.resources.memoryMb },
      Disk: { DiskMB: node.resources.diskMb },
      // Nomad's bridge fingerprint adds a network of mode "bridge": what placement of a bridge group looks for.
      Networks: [{ Mode: "host", Device: address.device, CIDR: `${address.ip}/32`, IP: address.ip }, ...(node.bridge ? [{ Mode: "bridge" as const, Device: node.bridge, CIDR: "", IP: "" }] : [])],
      MinDynamicPort: config.client.min_dynamic_port,
      MaxDynamicPort: config.client.max_dynamic_port,
      Devices: devices,
    },
    ReservedResources: {
      Cpu: { CpuShares: reserved.cpu },
      Memory: { MemoryMB: reserved.memory },
      Disk: { DiskMB: reserved.disk },
      Networks: { ReservedHostPorts: reserved.reserved_ports },
    },
    Status: "ready",
    StatusDescription: "",
    SchedulingEligibility: "eligible",
  };
}
