/** For tests of group bridge networks: a bridge and subnet of the test's own, host tools, plain HTTP gets. */
import { DEFAULT_CNI_PATH } from "../../src/lib/bridge-network.ts";
import { bridgeUnavailable } from "../../src/client/network/support.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";

/** Why bridge networks cannot be built here, or null. */
export const bridgeMissing: string | null = bridgeUnavailable({ bridgeName: "probe", subnet: "10.0.0.0/24", cniPath: DEFAULT_CNI_PATH });

/** A bridge name and a /24 of the test's own: the host is shared, Nomad's "nomad" and 172.26.64.0/20 are left alone. */
export function testBridge(prefix: string): { bridge: string; subnet: string } {
  return {
    bridge: `${prefix}${Math.random().toString(16).slice(2, 8)}`,
    subnet: `10.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 250)}.0/24`,
  };
}

/** Runs a host tool (ip, iptables-save); its stdout. */
export async function hostTool(argv: string[]): Promise<string> {
  const child = spawnProcess({ argv, env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }, stdout: "pipe", stderr: "pipe" });
  const [, out] = await Promise.all([child.exited, new Response(child.stdout).text()]);
  return out;
}

/** The body of a 2xx answer, or null (refused, not there, an error status). */
export async function httpText(url: string): Promise<string | null> {
  try {
    const response = await fetch(url);
    return response.ok ? await response.text() : null;
  } catch {
    return null;
  }
}

/** What the client leaves on purpose, as Nomad does: the bridge and its NOMAD-ADMIN rule. */
export async function removeTestBridge({ bridge, subnet }: { bridge: string; subnet: string }): Promise<void> {
  await hostTool(["ip", "link", "delete", bridge]);
  await hostTool(["iptables", "-w", "-D", "NOMAD-ADMIN", "-o", bridge, "-d", subnet, "-j", "ACCEPT"]);
}
