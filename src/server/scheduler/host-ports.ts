/**
 * Ports something on the host already holds (listening TCP sockets, bound
 * UDP sockets), read from /proc/net. Placement skips them when it picks a
 * dynamic port, so a task does not start on a port another program owns.
 *
 * The kernel takes milliseconds to render /proc/net/tcp (measured 2-4 ms a
 * file here), so placement never waits for it: it uses the last snapshot,
 * and a snapshot older than HOST_PORTS_MAX_AGE_MS starts a fresh read in
 * the background. Where /proc is absent this reports nothing.
 */
import { readFile } from "node:fs/promises";

/**
 * How stale a snapshot may be before a new read starts. A port another
 * program bound within this window may still be handed out; the check is a
 * courtesy (allocs are never double-booked, that is exact), not a guarantee.
 */
export const HOST_PORTS_MAX_AGE_MS = 1_000;

/** /proc/net/tcp state 0A: LISTEN. */
const TCP_LISTEN = "0A";

const SOURCES: readonly { path: string; state: string | undefined }[] = [
  { path: "/proc/net/tcp", state: TCP_LISTEN },
  { path: "/proc/net/tcp6", state: TCP_LISTEN },
  { path: "/proc/net/udp", state: undefined },
  { path: "/proc/net/udp6", state: undefined },
];

/** The local ports of the sockets in one /proc/net table, those in `state` when given. */
export function parseProcNet(text: string, state: string | undefined): number[] {
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

async function readBoundPorts(): Promise<Set<number>> {
  const tables = await Promise.all(SOURCES.map(({ path }) => readFile(path, "utf8").catch(() => "")));
  return new Set(tables.flatMap((text, i) => parseProcNet(text, SOURCES[i]!.state)));
}

export class HostPorts {
  private ports: ReadonlySet<number> = new Set();
  private readAt = 0;
  private reading: Promise<void> | undefined;

  /** The latest snapshot; starts a background read when it is stale. */
  current(): ReadonlySet<number> {
    if (Date.now() - this.readAt > HOST_PORTS_MAX_AGE_MS) void this.refresh();
    return this.ports;
  }

  /** Reads the tables now (one read at a time); resolves when the snapshot is fresh. */
  refresh(): Promise<void> {
    this.reading ??= readBoundPorts().then((ports) => {
      this.ports = ports;
      this.readAt = Date.now();
      this.reading = undefined;
    });
    return this.reading;
  }
}
