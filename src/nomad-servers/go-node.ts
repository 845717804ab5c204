/**
 * drover's node record as a Nomad 0.12 server's structs.Node: the new
 * NodeResources and the legacy Resources (0.12 still reads both), the host
 * network both as a NetworkResource and as a NodeNetworkResource with the
 * "default" alias (port placement reads the latter), drivers with their
 * health, device groups, host volumes (which the server's placement
 * checks), and the identity a server checks (ID, SecretID,
 * Datacenter, Name, a non-empty Attributes map). For servers since 1.6: the
 * node pool, the CPU's core count (from which 1.7+ servers build the node's
 * CPU topology), and `nomad.service_discovery`, which the constraint a 1.3+
 * server adds to a group with services of provider "nomad" reads (drover
 * registers those through ServiceRegistration.Upsert). `nomad.version` stays
 * the version whose client protocol drover speaks: 1.x servers add
 * constraints on it for what later clients do (native service checks >= 1.4,
 * NUMA >= 1.7, workload identities >= 1.7), which drover does not.
 */
import type { NodeRegistration } from "../structs/node.ts";
import { isoToGoTime } from "./go-values.ts";

/** The Nomad version whose client protocol drover speaks; servers read it from the node's attributes. */
export const NOMAD_PROTOCOL_VERSION = "0.12.12";
/** Nomad reports a host network's speed; placement subtracts asked-for bandwidth from it. Nomad's own default when it cannot tell. */
const DEFAULT_NETWORK_MBITS = 1000;

export function goNode(node: NodeRegistration, secretId: string): Record<string, unknown> {
  const resources = node.NodeResources;
  const reserved = node.ReservedResources;
  const networks = resources.Networks.map((net) => ({
    Mode: net.Mode,
    // Nomad's bridge network has no device here (NodeNetworks names it): a device would offer it for ports.
    Device: net.Mode === "bridge" ? "" : net.Device,
    CIDR: net.CIDR,
    IP: net.IP,
    MBits: DEFAULT_NETWORK_MBITS,
  }));
  const now = isoToGoTime(new Date().toISOString());
  return {
    ID: node.ID,
    SecretID: secretId,
    Datacenter: node.Datacenter,
    Name: node.Name,
    // Nomad 1.6's node pool (client.node_pool); servers before 1.6 ignore it.
    NodePool: node.NodePool,
    HTTPAddr: node.HTTPAddr,
    TLSEnabled: false,
    Attributes: {
      ...node.Attributes,
      "nomad.version": NOMAD_PROTOCOL_VERSION,
      "nomad.advertise.address": node.HTTPAddr,
      "nomad.service_discovery": "true",
    },
    NodeResources: {
      // TotalCpuCores: a 1.7+ server builds the node's CPU topology from these two (structs.Compatibility);
      // without the core count it builds none, and the node offers no CPU to place on.
      Cpu: { CpuShares: resources.Cpu.CpuShares, TotalCpuCores: resources.Cpu.TotalCpuCores },
      Memory: { MemoryMB: resources.Memory.MemoryMB },
      Disk: { DiskMB: resources.Disk.DiskMB },
      Networks: networks,
      NodeNetworks: resources.Networks.map((net) => ({
        Mode: net.Mode,
        Device: net.Device,
        Speed: DEFAULT_NETWORK_MBITS,
        Addresses: net.IP ? [{ Family: "ipv4", Alias: "default", Address: net.IP, ReservedPorts: "", Gateway: "" }] : null,
      })),
      // The device plugins' groups, in Go's shape already (psstructs.Attribute: one value set, and a unit).
      Devices: resources.Devices.length > 0 ? resources.Devices : null,
    },
    ReservedResources: {
      Cpu: { CpuShares: reserved.Cpu.CpuShares },
      Memory: { MemoryMB: reserved.Memory.MemoryMB },
      Disk: { DiskMB: reserved.Disk.DiskMB },
      Networks: { ReservedHostPorts: reserved.Networks.ReservedHostPorts },
    },
    Resources: { CPU: resources.Cpu.CpuShares, MemoryMB: resources.Memory.MemoryMB, DiskMB: resources.Disk.DiskMB, Networks: networks.filter((net) => net.Mode === "host") },
    Reserved: { CPU: reserved.Cpu.CpuShares, MemoryMB: reserved.Memory.MemoryMB, DiskMB: reserved.Disk.DiskMB },
    Links: {},
    HostVolumes: Object.keys(node.HostVolumes).length > 0 ? node.HostVolumes : null,
    Meta: node.Meta,
    NodeClass: node.NodeClass,
    Status: "initializing",
    Drivers: Object.fromEntries(
      Object.entries(node.Drivers).map(([name, driver]) => [
        name,
        { Attributes: driver.Attributes, Detected: driver.Detected, Healthy: driver.Healthy, HealthDescription: driver.HealthDescription, UpdateTime: now },
      ]),
    ),
  };
}
