/**
 * Whether a TCP connection to the agent comes from one of this host's tasks,
 * and which: the kernel's record of the connection's other end (sock_diag)
 * against the tasks' cgroups.
 *
 *   peer's socket found on this host ──> its v2 cgroup id is a task's?  ──yes──> task
 *     │                                    (no v2 tree here: is its inode held by a
 *     │                                     process in a task's cgroup? /proc/PID/fd)
 *     │                                  ──no───> host (an operator's tool, another service)
 *     ├─ found, but no process holds it (closed, time-wait) ─────> gone
 *     └─ not found, and the peer's address is this host's ───────> unknown local caller
 *   not found, from another host ─────────────────────────────────> remote
 *
 * Where the kernel offers no sock_diag for TCP (inet_diag or tcp_diag not
 * loaded), the socket is looked up in /proc/net/tcp{,6} instead and its holder
 * found by inode, as on a host without a v2 tree (`chooseSocketLookup`).
 *
 * A socket keeps the cgroup its creator was in, so passing the descriptor on
 * or exiting does not launder it (by inode, only the processes holding it
 * count). A caller that closed its socket right after
 * sending a request cannot be told (it may have been a task), so the API
 * refuses a gone or unknown caller as it refuses a task; a gone one cannot
 * read the answer either way.
 * cgroup ids are never reused while the host runs, so answers are cached.
 */
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { networkInterfaces } from "node:os";
import type { CgroupLayout } from "../cgroups/detect.ts";
import { normalizeParent, taskOfLeaf, unifiedParentDir } from "../cgroups/paths.ts";
import { lookupTcpSocket, sockDiagUnavailable, TCP_TIME_WAIT, type Endpoint, type TcpSocketOwner } from "../runtime/sock-diag.ts";
import { lookupTcpSocketInProcfs } from "./proc-net-tcp.ts";

export interface TaskRef {
  allocId: string;
  taskName: string;
}

export type PeerVerdict = { kind: "task"; task: TaskRef } | { kind: "host" } | { kind: "remote" } | { kind: "unknown-local" } | { kind: "gone" };

/** Cached cgroup ids (task or not) before the cache starts over; ids of gone cgroups pile up otherwise. */
const CGROUP_CACHE_ENTRIES = 4096;

const WILDCARDS = new Set(["0.0.0.0", "::", ""]);
const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** The socket on this host whose local end is `local` and remote end `remote`, or null. */
export type SocketLookup = (local: Endpoint, remote: Endpoint) => TcpSocketOwner | null;

/** What to tell an operator whose kernel offers no sock_diag for TCP. */
export const SOCK_DIAG_MISSING =
  "sock_diag cannot answer for TCP sockets: the inet_diag and tcp_diag kernel modules are not loaded " +
  "(load them with `modprobe -a inet_diag tcp_diag`, and at boot by listing them in /etc/modules-load.d/drover.conf); " +
  "until then, tasks calling the API are told apart through /proc/net/tcp and their processes' descriptors";

/**
 * sock_diag where the kernel answers it; otherwise /proc/net/tcp, with why
 * (`missing`) for the agent's log. `probe` is the seam a test uses to see a
 * kernel without the handlers.
 */
export function chooseSocketLookup(probe: () => string | null = sockDiagUnavailable): { lookup: SocketLookup; missing?: string } {
  const why = probe();
  return why === null ? { lookup: lookupTcpSocket } : { lookup: lookupTcpSocketInProcfs, missing: `${SOCK_DIAG_MISSING} (${why})` };
}

export class TaskPeers {
  private readonly byCgroupId = new Map<bigint, TaskRef | null>();

  constructor(
    private readonly layout: CgroupLayout,
    private readonly cgroupParent: string,
    private readonly lookup: SocketLookup = lookupTcpSocket,
  ) {}

  /** Who is at the other end of the connection from `peer` to this agent listening on `local`. */
  identify(peer: Endpoint, local: Endpoint): PeerVerdict {
    // A peer without an address cannot be looked up, and is never let through as the host's.
    if (!peer.address) return { kind: "unknown-local" };
    const owner = this.findSocket(peer, local);
    if (!owner) return isHostAddress(peer.address) ? { kind: "unknown-local" } : { kind: "remote" };
    if (owner.state === TCP_TIME_WAIT || owner.inode === 0) return { kind: "gone" };
    const task = owner.cgroupId !== undefined && unifiedParentDir(this.layout, this.cgroupParent) ? this.taskOfCgroup(owner.cgroupId) : this.taskHoldingSocket(owner.inode);
    return task ? { kind: "task", task } : { kind: "host" };
  }

  /**
   * The peer's socket. On a wildcard listener the address the peer dialled is
   * not known: its own address first (a local client's usual source), then
   * loopback and this host's other addresses.
   */
  private findSocket(peer: Endpoint, local: Endpoint): TcpSocketOwner | null {
    const targets = WILDCARDS.has(local.address) ? [peer.address, "127.0.0.1", "::1", ...hostAddresses()] : [local.address];
    for (const address of new Set(targets)) {
      const owner = this.lookup(peer, { address, port: local.port });
      if (owner) return owner;
    }
    return null;
  }

  private taskOfCgroup(id: bigint): TaskRef | null {
    if (!this.byCgroupId.has(id)) this.rescan();
    // Remembered as "not a task" too: a cgroup's id never names another later.
    if (!this.byCgroupId.has(id)) this.byCgroupId.set(id, null);
    return this.byCgroupId.get(id) ?? null;
  }

  /** Re-reads the tasks' cgroups in the v2 tree: each leaf's inode number is its cgroup id. */
  private rescan(): void {
    if (this.byCgroupId.size > CGROUP_CACHE_ENTRIES) this.byCgroupId.clear();
    const parent = unifiedParentDir(this.layout, this.cgroupParent);
    if (!parent) return;
    for (const leaf of readdirOrEmpty(parent)) {
      const task = taskOfLeaf(leaf);
      if (!task) continue;
      try {
        this.byCgroupId.set(BigInt(statSync(`${parent}/${leaf}`).ino), task);
      } catch {
        // Removed meanwhile.
      }
    }
  }

  /** Without the socket's cgroup id: the task one of whose processes has the socket open. */
  private taskHoldingSocket(inode: number): TaskRef | null {
    const hierarchy = this.taskHierarchy();
    if (!hierarchy) return null;
    const link = `socket:[${inode}]`;
    for (const leaf of readdirOrEmpty(hierarchy)) {
      const task = taskOfLeaf(leaf);
      if (!task) continue;
      for (const pid of readLines(`${hierarchy}/${leaf}/cgroup.procs`)) {
        for (const fd of readdirOrEmpty(`/proc/${pid}/fd`)) {
          if (readlinkOrNull(`/proc/${pid}/fd/${fd}`) === link) return task;
        }
      }
    }
    return null;
  }

  /** A directory whose leaves hold every process of each task: the v2 tree, else v1's memory hierarchy (the one a task is spawned into). */
  private taskHierarchy(): string | undefined {
    if (this.layout.mode === "v1" && this.layout.mounts.memory) return `${this.layout.mounts.memory}/${normalizeParent(this.cgroupParent)}`;
    return unifiedParentDir(this.layout, this.cgroupParent);
  }
}

function hostAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

function isHostAddress(address: string): boolean {
  return LOOPBACK.test(address) || hostAddresses().includes(address.replace(/^::ffff:/, ""));
}

function readdirOrEmpty(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function readlinkOrNull(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
