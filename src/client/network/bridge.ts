/**
 * Group `network { mode = "bridge" }` as Nomad 1.x builds it: the alloc's
 * own network namespace (netns.ts), joined to a host bridge (`nomad`,
 * 172.26.64.0/20 unless client.bridge_network_name/_subnet say otherwise)
 * through the CNI plugins of Nomad's own conflist: loopback, bridge (with
 * host-local addresses, masquerade, the bridge as gateway), firewall (its
 * rules under the NOMAD-ADMIN chain) and portmap (each group port's host
 * port to its `to` port, tcp and udp, with snat so 127.0.0.1 reaches it).
 *
 *   setup:    netns ─> NOMAD-ADMIN accepts the bridge's subnet ─> CNI ADD ─> the result, kept
 *   teardown: CNI DEL with the kept result and list (a config changed since still
 *             deletes what was made) ─> netns removed
 */
import * as v from "valibot";
import type { Allocation } from "../../structs/alloc.ts";
import { CNI_VERSION, CniResultSchema, CniRunner, NetworkConfigListSchema, type CniAttachment, type NetworkConfigList } from "./cni.ts";
import { runTool } from "../../runtime/spawn.ts";
import { createNetns, deleteNetns, netnsPath } from "./netns.ts";

/** The name of Nomad's network: host-local keeps its leases under /var/lib/cni/networks/<name>. */
export const BRIDGE_NETWORK_NAME = "nomad";
export const ADMIN_CHAIN = "NOMAD-ADMIN";
/** The alloc's interface in its namespace (go-cni's prefix "eth", first network). */
export const ALLOC_IFNAME = "eth0";
/** The plugins Nomad's bridge conflist calls. */
export const BRIDGE_PLUGINS = ["loopback", "bridge", "firewall", "portmap", "host-local"] as const;

export interface BridgeSettings {
  bridgeName: string;
  subnet: string;
  cniPath: string;
}

/** What teardown needs, kept in the alloc's local state from setup on. */
export const AllocNetworkSchema = v.object({
  netns: v.string(),
  ifName: v.string(),
  list: NetworkConfigListSchema,
  runtimeConfig: v.record(v.string(), v.unknown()),
  /** Absent until ADD answered: a teardown then still deletes what a half-done ADD made. */
  result: v.optional(CniResultSchema),
  /** The alloc's address on the bridge. */
  address: v.optional(v.string()),
});
export type AllocNetwork = v.InferOutput<typeof AllocNetworkSchema>;

/** The address in a saved record (alloc local state), if it is one. */
export function savedAddress(record: unknown): string | undefined {
  const parsed = v.safeParse(AllocNetworkSchema, record);
  return parsed.success ? parsed.output.address : undefined;
}

/** Nomad's conflist, with the bridge and subnet of this client. */
export function bridgeConfigList(settings: BridgeSettings): NetworkConfigList {
  return {
    cniVersion: CNI_VERSION,
    name: BRIDGE_NETWORK_NAME,
    plugins: [
      { type: "loopback" },
      {
        type: "bridge",
        bridge: settings.bridgeName,
        ipMasq: true,
        isGateway: true,
        forceAddress: true,
        hairpinMode: false,
        ipam: { type: "host-local", ranges: [[{ subnet: settings.subnet }]], routes: [{ dst: "0.0.0.0/0" }] },
      },
      { type: "firewall", backend: "iptables", iptablesAdminChainName: ADMIN_CHAIN },
      { type: "portmap", capabilities: { portMappings: true }, snat: true },
    ],
  };
}

/** portmap's portMappings: each group port's host port to its `to` (or the same port), tcp and udp, as Nomad maps them. */
export function portMappings(alloc: Allocation): Array<{ hostPort: number; containerPort: number; protocol: string; hostIP?: string }> {
  const shared = alloc.AllocatedResources.Shared;
  const ports =
    shared.Ports.length > 0
      ? shared.Ports
      : shared.Networks.flatMap((network) => [...network.DynamicPorts, ...network.ReservedPorts].map((port) => ({ ...port, HostIP: network.IP })));
  return ports.flatMap((port) =>
    ["tcp", "udp"].map((protocol) => ({
      hostPort: port.Value,
      containerPort: port.To > 0 ? port.To : port.Value,
      protocol,
      ...(port.HostIP ? { hostIP: port.HostIP } : {}),
    })),
  );
}

function attachment(allocId: string, network: AllocNetwork): CniAttachment {
  return { containerId: allocId, netns: network.netns, ifName: network.ifName, runtimeConfig: network.runtimeConfig };
}

/** The first address the result gives an interface inside the namespace (Nomad's AllocNetworkStatus.Address). */
function sandboxAddress(result: v.InferOutput<typeof CniResultSchema>): string | undefined {
  const interfaces = result.interfaces ?? [];
  const inSandbox = (result.ips ?? []).find((ip) => ip.interface !== undefined && interfaces[ip.interface]?.sandbox);
  return (inSandbox ?? result.ips?.[0])?.address.split("/")[0];
}

export class BridgeNetwork {
  private readonly cni: CniRunner;
  /** The last admin-rule check: allocs set up together check it one after another, so none appends it twice. */
  private adminRule: Promise<void> = Promise.resolve();

  constructor(private readonly settings: BridgeSettings) {
    this.cni = new CniRunner(settings.cniPath);
  }

  /** The network an alloc would get, before anything is made (saved first, so a crash mid-setup is cleaned up). */
  plan(alloc: Allocation): AllocNetwork {
    return { netns: netnsPath(alloc.ID), ifName: ALLOC_IFNAME, list: bridgeConfigList(this.settings), runtimeConfig: { portMappings: portMappings(alloc) } };
  }

  /** Makes the namespace and attaches it; `network` is plan()'s answer. */
  async setup(allocId: string, network: AllocNetwork): Promise<AllocNetwork> {
    await createNetns(allocId);
    await this.ensureAdminRule();
    const result = await this.cni.add(network.list, attachment(allocId, network));
    const address = sandboxAddress(result);
    return { ...network, result, ...(address ? { address } : {}) };
  }

  /** Detaches and removes the namespace; everything is tried, the first failure thrown after. */
  async teardown(allocId: string, network: AllocNetwork): Promise<void> {
    let first: unknown;
    try {
      await this.cni.del(network.list, attachment(allocId, network), network.result);
    } catch (err) {
      first = err;
    }
    try {
      await deleteNetns(allocId);
    } catch (err) {
      first ??= err;
    }
    if (first !== undefined) throw first;
  }

  private ensureAdminRule(): Promise<void> {
    const check = this.adminRule.catch(() => undefined).then(() => this.addAdminRule());
    this.adminRule = check;
    return check;
  }

  /** Nomad's forwarding rule, checked on every setup as Nomad does: traffic out of the bridge to the alloc subnet is accepted before the firewall plugin's chains. */
  private async addAdminRule(): Promise<void> {
    const rule = ["-o", this.settings.bridgeName, "-d", this.settings.subnet, "-j", "ACCEPT"];
    const chains = await runTool(["iptables", "-w", "-t", "filter", "-S"]);
    if (!chains.split("\n").includes(`-N ${ADMIN_CHAIN}`)) await runTool(["iptables", "-w", "-t", "filter", "-N", ADMIN_CHAIN]).catch(() => undefined);
    const present = await runTool(["iptables", "-w", "-t", "filter", "-C", ADMIN_CHAIN, ...rule]).then(
      () => true,
      () => false,
    );
    if (!present) await runTool(["iptables", "-w", "-t", "filter", "-A", ADMIN_CHAIN, ...rule]);
  }
}
