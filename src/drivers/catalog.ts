/**
 * The drivers this node offers, built once at agent start: raw_exec (on only
 * when the operator enables it), and exec and docker (healthy only where the
 * host can isolate, which is detected here, once).
 */
import { DEFAULT_EXEC_CAPABILITIES, type CapabilityName } from "../lib/capabilities.ts";
import type { FilteredSyscall } from "../lib/syscall-filter.ts";
import type { IsolationMode } from "../lib/isolation-mode.ts";
import { detectIsolation, type IsolationSupport } from "../nsenter/detect.ts";
import { DEFAULT_CHROOT_ENV } from "../nsenter/spec.ts";
import { DockerDriver, type DockerPluginOptions } from "./docker/driver.ts";
import type { DriverPlugin } from "./driver.ts";
import { ExecDriver } from "./exec.ts";
import type { ExecutorDriverOptions } from "./executor-driver.ts";
import { RawExecDriver } from "./raw-exec.ts";

export interface DriverCatalogOptions extends ExecutorDriverOptions {
  /** plugin "raw_exec" { config { enabled } } (or Nomad's older client option). */
  rawExecEnabled: boolean;
  /** client.chroot_env; Nomad's default set when absent. */
  chrootEnv?: Readonly<Record<string, string>> | undefined;
  /** plugin "exec" { config { allow_caps } }: narrows Nomad's default exec set. */
  allowCaps?: readonly CapabilityName[] | undefined;
  /** plugin "exec" { config { allow_syscalls } }: filtered calls a job may ask for. */
  allowSyscalls?: readonly FilteredSyscall[] | undefined;
  /** plugin "exec" { config { default_pid_mode, default_ipc_mode } }. */
  defaultPidMode?: IsolationMode | undefined;
  defaultIpcMode?: IsolationMode | undefined;
  /** plugin "docker" { config { ... } } and where its images live (<data_dir>/images); no docker driver without it. */
  docker?: (DockerPluginOptions & { imageDir: string }) | undefined;
}

/** Nomad's default exec set, narrowed to allow_caps when given. */
function allowedCapabilities(allow: readonly CapabilityName[] | undefined): CapabilityName[] {
  return DEFAULT_EXEC_CAPABILITIES.filter((cap) => allow === undefined || allow.includes(cap));
}

export function makeDrivers(options: DriverCatalogOptions, isolation: IsolationSupport): Map<string, DriverPlugin> {
  const { rawExecEnabled, chrootEnv, allowCaps, allowSyscalls, defaultPidMode, defaultIpcMode, docker, ...common } = options;
  const drivers = new Map<string, DriverPlugin>([
    ["raw_exec", new RawExecDriver({ ...common, enabled: rawExecEnabled })],
    [
      "exec",
      new ExecDriver({
        ...common,
        support: isolation,
        chrootEnv: chrootEnv ?? DEFAULT_CHROOT_ENV,
        capabilities: allowedCapabilities(allowCaps),
        allowCaps,
        allowSyscalls: allowSyscalls ?? [],
        defaultPidMode: defaultPidMode ?? "private",
        defaultIpcMode: defaultIpcMode ?? "private",
      }),
    ],
  ]);
  if (docker) {
    const { imageDir, ...plugin } = docker;
    drivers.set("docker", new DockerDriver({ ...common, support: isolation, imageDir, plugin }));
  }
  return drivers;
}

/** Detects what this host can isolate, then builds the drivers; says why exec is unavailable. */
export async function detectDrivers(options: DriverCatalogOptions, warn: (reason: string) => void): Promise<Map<string, DriverPlugin>> {
  const isolation = await detectIsolation();
  if (!isolation.available) warn(isolation.reason);
  return makeDrivers(options, isolation);
}
