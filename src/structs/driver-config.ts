/**
 * The `config` block of the drivers drover has (raw_exec and exec): a job
 * keeps any driver's config as written; this reads the one these drivers
 * take. The server checks it on register (a job for a driver drover has
 * should not wait for a node to say its config is wrong) and the client
 * again before a start (an allocation may come from elsewhere).
 */
import * as v from "valibot";
import { ALL_CAPABILITIES, CAPABILITY_NAMES, normalizeCapability } from "../lib/capabilities.ts";
import { IsolationModeSchema } from "../lib/isolation-mode.ts";
import { FilteredSyscallSchema } from "../lib/syscall-filter.ts";
import { DRIVERS, type DriverName } from "./job.ts";

/**
 * `${...}` stays literal: the task runner resolves it. The keys of both
 * drivers; each driver refuses the ones it does not take (raw_exec:
 * syscall_add) and checks them against the client's settings when it starts
 * the task.
 */
/** A capability as Nomad's job files may write it ("CAP_NET_RAW", "net_raw", "all"). */
const CapabilitySchema = v.pipe(
  v.string(),
  v.transform(normalizeCapability),
  v.picklist([...CAPABILITY_NAMES, ALL_CAPABILITIES], 'must name a Linux capability or "all"'),
);

export const ExecDriverConfigSchema = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  /** HCL2 keeps `args = ["-n", 42]` as written; the driver reads each as text, as Nomad's does. */
  args: v.optional(v.array(v.pipe(v.union([v.string(), v.number(), v.boolean()]), v.transform(String))), []),
  /** Nomad's (docker driver's) field: most processes and threads the task may have at once; at most the client's pids_limit. */
  pids_limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, "must be at least 1"))),
  /** exec: calls of the default syscall filter the task may make; each must be in the plugin's allow_syscalls. */
  syscall_add: v.optional(v.array(FilteredSyscallSchema)),
  /** exec: "host" shares the host's PID namespace (the task sees the host's processes); the plugin's default_pid_mode when unset. */
  pid_mode: v.optional(IsolationModeSchema),
  /** exec: "host" shares the host's IPC namespace (System V IPC, POSIX queues); the plugin's default_ipc_mode when unset. */
  ipc_mode: v.optional(IsolationModeSchema),
  /** exec: capabilities added to the default set; each must be in the plugin's allow_caps. */
  cap_add: v.optional(v.array(CapabilitySchema)),
  /** exec: capabilities taken from the default set. */
  cap_drop: v.optional(v.array(CapabilitySchema)),
});
export type ExecDriverConfig = v.InferOutput<typeof ExecDriverConfigSchema>;

export function isKnownDriver(driver: string): driver is DriverName {
  return (DRIVERS as readonly string[]).includes(driver);
}
