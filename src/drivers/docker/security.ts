/**
 * A docker task's privileges and limits, from the job's keys and the plugin's
 * config, as Nomad's docker driver asks Docker for them:
 *
 *   capabilities  Docker's default set (exec's plus net_raw) within the plugin's allow_caps
 *                 (Nomad's default: exec's set), less cap_drop, plus cap_add (each in
 *                 allow_caps); a non-root user keeps them in its bounding set only
 *   privileged    only with allow_privileged: every capability the agent holds (less
 *                 cap_drop; cap_add adds nothing more) and no
 *                 syscall filter; namespaces, cgroups, masked /proc and the read-only
 *                 /dev stay (no host devices: those come from device plugins)
 *   ulimit        rlimits, set before the task starts
 *   sysctl        namespaced keys only; net.* only with a network namespace of its own
 *   shm_size      bytes of /dev/shm
 *   readonly_rootfs  the image's root read-only; /alloc, /local, /secrets, /dev/shm stay
 *                 writable (the image's /tmp does not, as under Docker)
 *   init          the host's static tini bound at /dev/init and run as PID 1
 *                 (`/dev/init -- argv`): it reaps zombies and forwards signals
 */
import { existsSync, readFileSync } from "node:fs";
import { CAPABILITY_NAMES, capabilityMask, DEFAULT_DOCKER_CAPABILITIES, DEFAULT_EXEC_CAPABILITIES, taskCapabilities, type CapabilityName } from "../../lib/capabilities.ts";
import { sysctlNamespace } from "../../lib/sysctls.ts";
import { ValidationError } from "../../lib/validation.ts";
import { INIT_TASK_PATH, type IsolationSpecInput } from "../../nsenter/spec.ts";
import type { DockerDriverConfig } from "../../structs/driver-config.ts";

/** Where Debian's tini package (and Docker's docker-init) put a statically linked tini: it runs in any image. */
export const STATIC_INIT_PATHS = ["/usr/bin/tini-static", "/usr/bin/docker-init", "/usr/libexec/docker/docker-init"] as const;

export interface DockerSecurityPlugin {
  /** plugin "docker" { config { allow_caps } }; Nomad's default set when absent. */
  allowCaps?: readonly CapabilityName[] | undefined;
  allowPrivileged?: boolean | undefined;
}

type Keys = Pick<DockerDriverConfig, "cap_add" | "cap_drop" | "privileged" | "ulimit" | "sysctl" | "shm_size" | "readonly_rootfs" | "init">;
export type ContainerSecurity = Required<Pick<IsolationSpecInput, "capabilities" | "rlimits" | "sysctls" | "readOnlyRoot" | "syscallFilter">> &
  Pick<IsolationSpecInput, "shmBytes" | "init">;

export function containerSecurity(keys: Keys, plugin: DockerSecurityPlugin, ownNetwork: boolean): ContainerSecurity {
  if (keys.privileged && !plugin.allowPrivileged) {
    throw new ValidationError("config", ['privileged: Docker privileged mode is disabled on this client (plugin "docker" allow_privileged = false)']);
  }
  const allowCaps = plugin.allowCaps ?? DEFAULT_EXEC_CAPABILITIES;
  const capabilities = keys.privileged
    ? taskCapabilities(heldCapabilities(), undefined, [], keys.cap_drop ?? [])
    : taskCapabilities(DEFAULT_DOCKER_CAPABILITIES, allowCaps, keys.cap_add ?? [], keys.cap_drop ?? []);
  if ("notAllowed" in capabilities) {
    throw new ValidationError("config", [`cap_add: ${capabilities.notAllowed.join(", ")} not allowed on this client (plugin "docker" allow_caps: ${allowCaps.join(", ") || "none"})`]);
  }
  const sysctls = keys.sysctl ?? {};
  const needsNetwork = Object.keys(sysctls).filter((key) => sysctlNamespace(key) === "net" && !ownNetwork);
  if (needsNetwork.length > 0) {
    throw new ValidationError("config", [`sysctl: ${needsNetwork.join(", ")} needs a network namespace of the task's own; on the host's network it would change the host`]);
  }
  let init: string | undefined;
  if (keys.init) {
    init = findStaticInit();
    if (!init) throw new ValidationError("config", [`init: no static init on this client (install Debian's tini package: ${STATIC_INIT_PATHS.join(" or ")})`]);
  }
  return {
    capabilities: capabilities.capabilities,
    rlimits: keys.ulimit ?? {},
    sysctls,
    readOnlyRoot: keys.readonly_rootfs,
    syscallFilter: !keys.privileged,
    ...(keys.shm_size === undefined ? {} : { shmBytes: keys.shm_size }),
    ...(init === undefined ? {} : { init }),
  };
}

/** argv as the task runs it: behind the init when there is one. */
export function withInit(argv: readonly string[], security: ContainerSecurity): string[] {
  return security.init ? [INIT_TASK_PATH, "--", ...argv] : [...argv];
}

/** The capabilities this agent holds (its bounding set): all a privileged task can get. */
function heldCapabilities(): CapabilityName[] {
  const bounding = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0"}`);
  return CAPABILITY_NAMES.filter((name) => (bounding & capabilityMask([name])) !== 0n);
}

function findStaticInit(): string | undefined {
  return STATIC_INIT_PATHS.find((path) => existsSync(path));
}
