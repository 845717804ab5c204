/**
 * Linux capabilities by the names Nomad's job files use ("net_bind_service"),
 * and the set an exec task keeps by default.
 */

/** capability(7) numbers; a name's index is its number. */
export const CAPABILITY_NAMES = [
  "chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid", "setuid",
  "setpcap", "linux_immutable", "net_bind_service", "net_broadcast", "net_admin", "net_raw",
  "ipc_lock", "ipc_owner", "sys_module", "sys_rawio", "sys_chroot", "sys_ptrace", "sys_pacct",
  "sys_admin", "sys_boot", "sys_nice", "sys_resource", "sys_time", "sys_tty_config", "mknod",
  "lease", "audit_write", "audit_control", "setfcap", "mac_override", "mac_admin", "syslog",
  "wake_alarm", "block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore",
] as const;
export type CapabilityName = (typeof CAPABILITY_NAMES)[number];

/**
 * Nomad's default for the exec driver (drivers/shared/capabilities): Docker's
 * default set without net_raw. No sys_admin, so a task cannot mount, unmount
 * or remount anything.
 */
export const DEFAULT_EXEC_CAPABILITIES: readonly CapabilityName[] = [
  "audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
  "net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
];

/** Docker's own default set (Nomad's DockerDefaults): the exec set plus net_raw, the docker driver's basis. */
export const DEFAULT_DOCKER_CAPABILITIES: readonly CapabilityName[] = [...DEFAULT_EXEC_CAPABILITIES, "net_raw"];

export function capabilityNumber(name: CapabilityName): number {
  return CAPABILITY_NAMES.indexOf(name);
}

/** The 64-bit mask with one bit per capability in `names`. */
export function capabilityMask(names: readonly CapabilityName[]): bigint {
  return names.reduce((mask, name) => mask | (1n << BigInt(capabilityNumber(name))), 0n);
}

/** Nomad's reading of a capability name: case and a "cap_" prefix do not matter ("CAP_NET_RAW" is net_raw). */
export function normalizeCapability(name: string): string {
  return name.trim().toLowerCase().replace(/^cap_/, "");
}

/** Nomad's name for every capability the system has, in cap_add and cap_drop. */
export const ALL_CAPABILITIES = "all";
export type CapabilityOrAll = CapabilityName | typeof ALL_CAPABILITIES;

/** `names` with "all" expanded to every capability. */
function expand(names: readonly CapabilityOrAll[]): Set<CapabilityName> {
  return new Set(names.includes(ALL_CAPABILITIES) ? CAPABILITY_NAMES : names.filter((name) => name !== ALL_CAPABILITIES));
}

/**
 * A task's capability set, as Nomad's capabilities.Calculate (exec) and
 * Delta (docker) make it: the basis within allow_caps, less cap_drop, plus
 * cap_add.
 * Every cap_add must be in allow_caps; the ones that are not are returned
 * instead, for the refusal.
 */
export function taskCapabilities(
  basis: readonly CapabilityName[],
  allowCaps: readonly CapabilityName[] | undefined,
  capAdd: readonly CapabilityOrAll[],
  capDrop: readonly CapabilityOrAll[],
): { capabilities: CapabilityName[] } | { notAllowed: CapabilityName[] } {
  const adds = expand(capAdd);
  const allowed = expand(allowCaps ?? [ALL_CAPABILITIES]);
  const notAllowed = [...adds].filter((cap) => !allowed.has(cap));
  if (notAllowed.length > 0) return { notAllowed };
  const drops = expand(capDrop);
  const kept = new Set([...basis.filter((cap) => allowed.has(cap) && !drops.has(cap)), ...adds]);
  return { capabilities: CAPABILITY_NAMES.filter((cap) => kept.has(cap)) };
}
