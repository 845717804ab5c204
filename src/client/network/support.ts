/**
 * Whether this host can build bridge networks, found once per agent: the
 * kernel's bridge (built in or loaded), root (namespaces, iptables), and the
 * tools and CNI plugins the setup calls. An alloc whose group asks for bridge
 * on a host without them fails with this reason.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BRIDGE_PLUGINS, type BridgeSettings } from "./bridge.ts";
import { TOOL_PATH } from "../../runtime/spawn.ts";
import { UTIL_LINUX_NSENTER as NSENTER } from "../../lib/bridge-network.ts";

const TOOLS = ["ip", "iptables"] as const;

const onPath = (name: string, path: string) => path.split(":").some((dir) => dir !== "" && existsSync(join(dir, name)));

/** Why bridge mode cannot work here, or null when it can. */
export function bridgeUnavailable(settings: BridgeSettings): string | null {
  if (process.getuid?.() !== 0) return "bridge networking needs the agent to run as root";
  if (!existsSync("/sys/module/bridge")) return "the kernel has no bridge module loaded (modprobe bridge)";
  const tools = TOOLS.filter((tool) => !onPath(tool, TOOL_PATH));
  if (tools.length > 0) return `bridge networking needs ${tools.join(" and ")} (Debian: apt-get install iproute2 iptables)`;
  if (!existsSync(NSENTER)) return `bridge networking needs ${NSENTER} (util-linux) for raw_exec tasks`;
  const plugins = BRIDGE_PLUGINS.filter((plugin) => !onPath(plugin, settings.cniPath));
  if (plugins.length > 0) {
    return `CNI plugins ${plugins.join(", ")} not found in cni_path ${settings.cniPath} (Debian: apt-get install containernetworking-plugins)`;
  }
  return null;
}
