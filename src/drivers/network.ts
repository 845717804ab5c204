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

/** util-linux's nsenter, which joins a namespace and execs the command in place (same pid). */
export const NSENTER = "/usr/bin/nsenter";

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
