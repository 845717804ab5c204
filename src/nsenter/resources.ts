/**
 * The task's share of the host: the cgroups it joins, its OOM score and its
 * rlimits. Applied while the role still runs as root in the host's mount
 * namespace (cgroupfs and /proc/self are the host's), before any namespace.
 */
import { existsSync, type Stats, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { attachDeviceFilter } from "../cgroups/device-filter.ts";
import { DEVICE_ALLOW_LIST } from "../cgroups/devices.ts";
import { RLIM_INFINITY, setrlimit } from "../runtime/libc.ts";
import { IsolationError, must } from "./errors.ts";
import { RLIMIT_NUMBERS, type RlimitName } from "../lib/rlimits.ts";
import type { DeviceNode } from "./spec.ts";

/** Linux's dev_t: MAJOR and MINOR as glibc splits a 64-bit device number. */
function majorMinor(rdev: number): string {
  const major = Math.floor(rdev / 256) & 0xfff;
  const minor = (rdev & 0xff) | (Math.floor(rdev / 4096) & 0xfff00);
  return `${major}:${minor}`;
}

/** The host's device node at `hostPath`; throws when there is none (a path missing, or not a device). */
export function requireDeviceNode(hostPath: string): Stats {
  const node = statSync(hostPath, { throwIfNoEntry: false });
  if (!node || !(node.isCharacterDevice() || node.isBlockDevice())) throw new IsolationError(`device ${hostPath} is not a device node on the host`);
  return node;
}

/**
 * Lets the task use the usual device nodes (devices.ts) and its device
 * plugin's, and no other, before it joins its cgroups. On v1 the executor
 * already wrote the usual list to the devices cgroup (devices.allow); a rule
 * per node is added to it ("c 195:0 rwm"). v2 has no devices files: the whole
 * list goes into a device program attached to the task's v2 cgroup (a hybrid
 * host's devices controller does the job there already).
 */
export function allowDeviceNodes(dirs: readonly string[], devices: readonly DeviceNode[]): void {
  const rules = devices.map(({ hostPath, permissions }) => {
    const node = requireDeviceNode(hostPath);
    return { hostPath, rule: `${node.isCharacterDevice() ? "c" : "b"} ${majorMinor(node.rdev)} ${permissions}` };
  });
  const controlled = dirs.filter((dir) => existsSync(join(dir, "devices.allow")));
  if (controlled.length === 0) {
    for (const dir of dirs.filter((dir) => existsSync(join(dir, "cgroup.controllers")))) {
      try {
        attachDeviceFilter(dir, [...DEVICE_ALLOW_LIST, ...rules.map(({ rule }) => rule)]);
      } catch (err) {
        throw new IsolationError(`attach the device allow-list to ${dir}: ${(err as Error).message}`);
      }
    }
    return;
  }
  for (const { hostPath, rule } of rules) {
    for (const dir of controlled) {
      try {
        writeFileSync(join(dir, "devices.allow"), rule);
      } catch (err) {
        throw new IsolationError(`allow device ${hostPath} (${rule}) in ${dir}: ${(err as Error).message}`);
      }
    }
  }
}

/**
 * Moves this process into each cgroup directory. It writes "0" (the writer
 * itself): a pid would be read in the writer's PID namespace, where this
 * process is 1 and its host pid means nothing.
 */
export function joinCgroups(dirs: readonly string[]): void {
  for (const dir of dirs) {
    try {
      writeFileSync(join(dir, "cgroup.procs"), "0");
    } catch (err) {
      throw new IsolationError(`join cgroup ${dir}: ${(err as Error).message}`);
    }
  }
}

export function setOomScoreAdj(value: number | undefined): void {
  if (value === undefined) return;
  try {
    writeFileSync("/proc/self/oom_score_adj", String(value));
  } catch (err) {
    throw new IsolationError(`set oom_score_adj ${value}: ${(err as Error).message}`);
  }
}

type RlimitValue = number | "unlimited";

export function applyRlimits(rlimits: Partial<Record<RlimitName, { soft: RlimitValue; hard: RlimitValue }>>): void {
  const value = (limit: RlimitValue) => (limit === "unlimited" ? RLIM_INFINITY : BigInt(limit));
  for (const [name, { soft, hard }] of Object.entries(rlimits) as [RlimitName, { soft: RlimitValue; hard: RlimitValue }][]) {
    must(setrlimit(RLIMIT_NUMBERS[name], value(soft), value(hard)), `set rlimit ${name} to ${soft}/${hard}`);
  }
}
