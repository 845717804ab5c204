/**
 * An alloc's network namespace, named by the alloc's ID as Nomad names it,
 * and kept at /var/run/netns/<alloc-id> (iproute2's place: `ip netns`
 * lists it, and it outlives every process in it and the agent itself, so a
 * restarted agent finds it again). Made and removed with `ip netns`, which
 * makes /var/run/netns a mount of its own with the propagation a persistent
 * namespace's bind mount needs.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runTool } from "../../runtime/spawn.ts";

export const NETNS_DIR = "/var/run/netns";

export function netnsPath(allocId: string): string {
  return join(NETNS_DIR, allocId);
}

/** Makes the alloc's namespace (loopback up); an existing one is kept, and false says so. */
export async function createNetns(allocId: string): Promise<boolean> {
  if (existsSync(netnsPath(allocId))) return false;
  await runTool(["ip", "netns", "add", allocId]);
  await runTool(["ip", "-n", allocId, "link", "set", "lo", "up"]);
  return true;
}

/** Removes the namespace's name; the namespace itself goes with its last process. */
export async function deleteNetns(allocId: string): Promise<void> {
  if (!existsSync(netnsPath(allocId))) return;
  await runTool(["ip", "netns", "delete", allocId]);
}
