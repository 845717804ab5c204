/**
 * The driver's view of the alloc's group network (TaskConfig.network, .netns,
 * .groupNetwork): the mode, the namespace to join in bridge mode, and the
 * group's hostname and dns blocks, interpolated as Nomad does.
 */
import type { Allocation } from "../../structs/alloc.ts";
import type { TaskConfig } from "../../drivers/driver.ts";
import { netnsPath } from "./netns.ts";

/** `address` is read only in bridge mode: it reads the alloc's stored state, and every other task start would pay for it. */
export function groupNetwork(alloc: Allocation, address: () => string | undefined, interpolate: (text: string) => string): Pick<TaskConfig, "network" | "netns" | "groupNetwork"> {
  const network = alloc.AllocatedResources.Shared.Networks[0];
  const all = (texts: readonly string[] | null) => (texts ?? []).map(interpolate);
  const groupNetwork = {
    ...(network?.Hostname ? { hostname: interpolate(network.Hostname) } : {}),
    ...(network?.DNS ? { dns: { servers: all(network.DNS.Servers), searches: all(network.DNS.Searches), options: all(network.DNS.Options) } } : {}),
  };
  switch (network?.Mode) {
    case "none":
      return { network: "none", groupNetwork };
    case "bridge": {
      const bridgeAddress = address();
      return { network: "bridge", netns: netnsPath(alloc.ID), groupNetwork: { ...groupNetwork, ...(bridgeAddress ? { address: bridgeAddress } : {}) } };
    }
    default:
      return { network: "host", groupNetwork };
  }
}
