/**
 * The sysctls a container may set, as Docker allows them: only those the
 * kernel keeps per namespace, so setting one changes nothing outside the
 * task. IPC ones (System V limits, POSIX message queues) belong to the task's
 * own IPC namespace; net.* to its network namespace, so only a task with a
 * network namespace of its own may set them.
 */

/** Docker's list (opts.ValidateSysctl): the System V IPC limits. */
const IPC_SYSCTLS = ["kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced"];
const IPC_PREFIX = "fs.mqueue.";
const NET_PREFIX = "net.";
/** Dotted words only: the key becomes a path below /proc/sys, which must stay there. */
const KEY_PATTERN = /^[a-z0-9_]+(\.[A-Za-z0-9_-]+)+$/;

export type SysctlNamespace = "ipc" | "net";

/** The namespace `key` belongs to, or null for a sysctl that is the whole host's. */
export function sysctlNamespace(key: string): SysctlNamespace | null {
  if (!KEY_PATTERN.test(key)) return null;
  if (IPC_SYSCTLS.includes(key) || key.startsWith(IPC_PREFIX)) return "ipc";
  return key.startsWith(NET_PREFIX) ? "net" : null;
}

/** Where the kernel shows `key` ("kernel.shmmax" -> "kernel/shmmax"), relative to /proc/sys. */
export function sysctlPath(key: string): string {
  return key.replaceAll(".", "/");
}

export const SYSCTL_RULE = `only namespaced sysctls may be set: ${IPC_SYSCTLS.join(", ")}, ${IPC_PREFIX}*, and ${NET_PREFIX}* with a network namespace of the task's own`;
