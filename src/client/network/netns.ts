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
import { spawnProcess } from "../../runtime/spawn.ts";

export const NETNS_DIR = "/var/run/netns";
/** Where the tools are looked for: the agent's own PATH may lack the sbin directories. */
export const TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export function netnsPath(allocId: string): string {
  return join(NETNS_DIR, allocId);
}

/** Runs a tool; throws its stderr on failure. */
export async function runTool(argv: readonly string[]): Promise<string> {
  const child = spawnProcess({ argv, env: { PATH: TOOL_PATH }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if (status.exitCode !== 0 || status.signal !== 0) throw new Error(`${argv.join(" ")}: ${stderr.trim() || `exit ${status.exitCode}`}`);
  return stdout;
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
