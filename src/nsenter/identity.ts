/**
 * Who the task runs as: its user and primary group, no supplementary groups,
 * a reduced capability set, and no_new_privs so neither setuid binaries nor
 * file capabilities can give any of it back.
 *
 * Capabilities follow the kernel's rules for the user: a root task keeps the
 * spec's set (effective, permitted, inheritable, bounding); any other user
 * ends with no capabilities at all and the same bounding set.
 */
import { readFileSync } from "node:fs";
import {
  capset,
  clearSupplementaryGroups,
  lookupUser,
  prctl,
  PR_CAP_AMBIENT,
  PR_CAP_AMBIENT_CLEAR_ALL,
  PR_CAPBSET_DROP,
  PR_SET_NO_NEW_PRIVS,
  setresgid,
  setresuid,
} from "../runtime/libc.ts";
import { capabilityMask, type CapabilityName } from "../lib/capabilities.ts";
import { IsolationError, must } from "./errors.ts";

export interface TaskIdentity {
  user: string;
  uid: number;
  gid: number;
  /** Capabilities kept; the rest are dropped from every set including the bounding set. */
  capabilities: bigint;
  /** The highest capability number this kernel knows. */
  lastCapability: number;
}

/**
 * Resolves the identity while the host's user database is still visible
 * (before the chroot), as Nomad does; "uid:gid" is taken as it is.
 */
export function resolveIdentity(user: string, capabilities: readonly CapabilityName[]): TaskIdentity {
  // "uid:gid" was resolved by the driver from the image's own user database.
  const numeric = /^(\d+):(\d+)$/.exec(user);
  const entry = numeric ? { uid: Number(numeric[1]), gid: Number(numeric[2]) } : lookupUser(user);
  if (!entry) throw new IsolationError(`user "${user}" does not exist on this host`);
  const lastCapability = Number(readFileSync("/proc/sys/kernel/cap_last_cap", "utf8").trim());
  return { user, ...entry, capabilities: capabilityMask(capabilities), lastCapability };
}

/** Becomes `identity` on the calling thread, for good. */
export function assumeIdentity(identity: TaskIdentity): void {
  for (let cap = 0; cap <= identity.lastCapability; cap++) {
    if (!(identity.capabilities & (1n << BigInt(cap)))) must(prctl(PR_CAPBSET_DROP, cap), `drop capability ${cap} from the bounding set`);
  }
  must(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL), "clear ambient capabilities");
  must(clearSupplementaryGroups(), "drop supplementary groups");
  must(setresgid(identity.gid), `set group ${identity.gid}`);
  must(setresuid(identity.uid), `set user ${identity.user} (${identity.uid})`);
  const kept = identity.uid === 0 ? identity.capabilities : 0n;
  must(capset(kept, kept, kept), "set capabilities");
  must(prctl(PR_SET_NO_NEW_PRIVS, 1), "set no_new_privs");
}
