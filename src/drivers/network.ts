/**
 * Where a task's network comes from, per driver, as Nomad's drivers decide it:
 *
 *   group mode   exec, docker (no network_mode)    raw_exec
 *   host         the host's                        the host's
 *   none         a namespace with only loopback    refused at register (cannot isolate)
 *   bridge       the alloc's namespace, joined     the alloc's namespace, joined through
 *                by the nsenter role               util-linux nsenter (Nomad's raw_exec joins it too)
 *
 * docker's network_mode overrides the group: "host", "none", or "bridge" (the
 * group's bridge namespace; drover has no Docker bridge of its own).
 */
import { ValidationError } from "../lib/validation.ts";
import type { IsolationSpecInput } from "../nsenter/spec.ts";
import { lookupUser } from "../executor/user.ts";
import { LaunchError, resolveCommand } from "../executor/launch.ts";
import type { ParsedTaskConfig } from "./driver.ts";
import { UTIL_LINUX_NSENTER as NSENTER } from "../lib/bridge-network.ts";
import { writeEtcFiles, type EtcFiles } from "./etc-files.ts";

/** Nomad's exec hostname, and drover's docker default: the alloc's short id. */
const HOSTNAME_LENGTH = 8;

/** docker's network keys, as drivers/docker reads them. */
export interface DockerNetworkConfig {
  network_mode?: "host" | "none" | "bridge" | undefined;
  hostname?: string | undefined;
  extra_hosts?: string[] | undefined;
  dns_servers?: string[] | undefined;
  dns_search_domains?: string[] | undefined;
  dns_options?: string[] | undefined;
}


/** The nsenter spec's network for an isolated task; docker's `network_mode` when given. */
export function networkOf(config: ParsedTaskConfig, networkMode?: "host" | "none" | "bridge"): Pick<IsolationSpecInput, "network" | "netns"> {
  const mode = networkMode ?? config.network;
  if (mode === "bridge") {
    if (config.network !== "bridge" || !config.netns) {
      throw new ValidationError("config", ['network_mode: "bridge" joins the group\'s bridge network: set network { mode = "bridge" } on the group']);
    }
    return { network: "host", netns: config.netns };
  }
  return { network: mode };
}

/**
 * An isolated task's network: the namespace (networkOf), its hostname, and
 * its own /etc/hosts and /etc/resolv.conf where asked. exec passes no docker
 * keys: only the group's dns block applies to it (Nomad's group hostname is
 * docker's alone).
 */
export function isolatedNetwork(config: ParsedTaskConfig, docker?: DockerNetworkConfig): Pick<IsolationSpecInput, "network" | "netns" | "hostname"> & { etcFiles: EtcFiles } {
  const network = networkOf(config, docker?.network_mode);
  const ownNetwork = network.netns !== undefined || network.network === "none";
  const groupHostname = network.netns !== undefined ? config.groupNetwork.hostname : undefined;
  const hostname = (docker && (docker.hostname ?? groupHostname)) || config.allocId.slice(0, HOSTNAME_LENGTH);
  const asked = docker && (docker.dns_servers || docker.dns_search_domains || docker.dns_options);
  const dns = asked ? { servers: docker.dns_servers ?? [], searches: docker.dns_search_domains ?? [], options: docker.dns_options ?? [] } : config.groupNetwork.dns;
  const etcFiles = writeEtcFiles(config.cwd, {
    // exec tasks keep the host's /etc (chroot_env): only docker's root gets a hosts file of its own.
    ownNetwork: docker !== undefined && ownNetwork,
    address: network.netns !== undefined ? config.groupNetwork.address : undefined,
    hostname,
    extraHosts: docker?.extra_hosts ?? [],
    dns,
  });
  return { ...network, hostname, etcFiles };
}

/**
 * A raw_exec task's argv in bridge mode: the command resolved here (so a
 * missing one fails the task as usual), behind nsenter --net, which also
 * takes on the task's user (setns needs root, so the executor must not drop
 * it first).
 */
export function rawExecArgv(config: ParsedTaskConfig, argv: [string, ...string[]]): [string, ...string[]] {
  if (config.network !== "bridge" || !config.netns) return argv;
  const [command, ...args] = argv;
  const resolved = resolveCommand(command, config.env.PATH, config.cwd);
  let identity;
  try {
    identity = config.user ? lookupUser(config.user) : undefined;
  } catch (err) {
    throw new LaunchError((err as Error).message);
  }
  const asUser = identity ? [`--setuid=${identity.uid}`, `--setgid=${identity.gid}`] : [];
  return [NSENTER, `--net=${config.netns}`, ...asUser, "--", resolved, ...args];
}
