/**
 * The task's own namespaces. Bun is multithreaded, so unshare and setns act on
 * the calling (JS) thread only; that is enough, because the same thread then
 * calls execve and the task inherits exactly its namespaces. The PID namespace
 * is not made here: it must exist before this process starts (see launch.ts).
 *
 *   isolate: [setns(the alloc's network)] -> unshare(mount, UTS, cgroup [, IPC] [, network]) -> sethostname [-> loopback up]
 *   enter:   setns(UTS, IPC, network, cgroup of the task) -> unshare(fs) -> setns(mount)
 *
 * The cgroup namespace is made after the task joined its cgroups (resources.ts):
 * its root is then the task's own cgroup in every hierarchy, so
 * /proc/self/cgroup reads "/" and a cgroupfs mounted inside would show
 * nothing above it.
 */
import { closeSync, openSync, readlinkSync } from "node:fs";
import {
  close,
  CLONE_FS,
  CLONE_NEWCGROUP,
  CLONE_NEWIPC,
  CLONE_NEWNET,
  CLONE_NEWNS,
  CLONE_NEWUTS,
  ioctlBuffer,
  sethostname,
  setns,
  socket,
  unshare,
} from "../runtime/libc.ts";
import type { IsolationMode } from "../lib/isolation-mode.ts";
import { IsolationError, must } from "./errors.ts";

export type NetworkMode = "host" | "none";

export function unshareTaskNamespaces(hostname: string, network: NetworkMode, ipcMode: IsolationMode, netns?: string): void {
  if (netns !== undefined) joinNetns(netns);
  const flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWCGROUP | (ipcMode === "private" ? CLONE_NEWIPC : 0) | (network === "none" ? CLONE_NEWNET : 0);
  must(unshare(flags), `create mount, UTS, cgroup${ipcMode === "private" ? ", IPC" : ""}${network === "none" ? ", network" : ""} namespaces`);
  must(sethostname(hostname), `set hostname ${hostname}`);
  if (network === "none") bringUpLoopback();
}

/** Joins the alloc's network namespace (bridge mode), which the client made and attached. */
function joinNetns(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new IsolationError(`open network namespace ${path}: ${(err as Error).message}`);
  }
  try {
    must(setns(fd, CLONE_NEWNET), `join network namespace ${path}`);
  } finally {
    closeSync(fd);
  }
}

/** A new network namespace has only "lo", and it is down; tasks expect 127.0.0.1 to work. */
function bringUpLoopback(): void {
  const AF_INET = 2;
  const SOCK_DGRAM = 2;
  const SOCK_CLOEXEC = 0x80000;
  const SIOCGIFFLAGS = 0x8913;
  const SIOCSIFFLAGS = 0x8914;
  const IFF_UP = 0x1;
  const fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  must(fd, "open a socket to configure loopback");
  try {
    // struct ifreq: char ifr_name[16], then the union (short ifr_flags first); 40 bytes.
    const request = new Uint8Array(40);
    request.set(Buffer.from("lo"));
    const flags = new DataView(request.buffer);
    must(ioctlBuffer(fd, SIOCGIFFLAGS, request), "read loopback flags");
    flags.setInt16(16, flags.getInt16(16, true) | IFF_UP, true);
    must(ioctlBuffer(fd, SIOCSIFFLAGS, request), "bring loopback up");
  } finally {
    close(fd);
  }
}

/** Namespaces an exec session joins besides the PID namespace (which launch.ts joins). */
const JOINED = [
  { name: "uts", type: CLONE_NEWUTS },
  { name: "ipc", type: CLONE_NEWIPC },
  { name: "net", type: CLONE_NEWNET },
  { name: "cgroup", type: CLONE_NEWCGROUP },
] as const;

/**
 * Joins the namespaces of running task `pid`. The mount namespace comes last:
 * setns into it needs a thread with its own filesystem context (hence
 * unshare(CLONE_FS)), and it leaves the thread at the task's root.
 */
export function joinTaskNamespaces(pid: number): void {
  const ownPidNs = readlinkSync("/proc/self/ns/pid");
  if (readlinkSync(`/proc/${pid}/ns/pid`) !== ownPidNs) {
    throw new IsolationError(`not in the PID namespace of task ${pid}: start "nsenter --exec" with startInTask()`);
  }
  const files = [...JOINED, { name: "mnt", type: CLONE_NEWNS }].map(({ name, type }) => {
    try {
      return { name, type, fd: openSync(`/proc/${pid}/ns/${name}`, "r") };
    } catch (err) {
      throw new IsolationError(`open ${name} namespace of task ${pid}: ${(err as Error).message}`);
    }
  });
  try {
    for (const { name, type, fd } of files) {
      if (type === CLONE_NEWNS) must(unshare(CLONE_FS), "take a private filesystem context");
      must(setns(fd, type), `join the ${name} namespace of task ${pid}`);
    }
  } finally {
    for (const { fd } of files) closeSync(fd);
  }
}
