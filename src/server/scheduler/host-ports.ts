/**
 * Ports something on the host already holds (listening TCP sockets, bound
 * UDP sockets), read from /proc/net. Placement skips them when it picks a
 * dynamic port, so a task does not start on a port another program owns.
 * Reading four small files per placement round costs well under a
 * millisecond; where /proc is absent this reports nothing.
 */
import { readFileSync } from "node:fs";

/** /proc/net/tcp state 0A: LISTEN. */
const TCP_LISTEN = "0A";

function portsIn(path: string, state: string | undefined): number[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    const local = fields[1];
    if (!local || (state !== undefined && fields[3] !== state)) continue;
    const port = Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16);
    if (Number.isInteger(port) && port > 0) ports.push(port);
  }
  return ports;
}

export function hostBoundPorts(): Set<number> {
  return new Set([
    ...portsIn("/proc/net/tcp", TCP_LISTEN),
    ...portsIn("/proc/net/tcp6", TCP_LISTEN),
    ...portsIn("/proc/net/udp", undefined),
    ...portsIn("/proc/net/udp6", undefined),
  ]);
}
