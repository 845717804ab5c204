/**
 * The CNI protocol, as a container runtime speaks it to plugins (CNI spec
 * 0.4.0, what Nomad 1.x's bridge conflist declares): each plugin is an
 * executable found on CNI_PATH, called with CNI_COMMAND, CNI_CONTAINERID,
 * CNI_NETNS, CNI_IFNAME and CNI_PATH in its environment and its network
 * config as JSON on stdin; it answers a result (ADD) or nothing (DEL)
 * on stdout, or an error object and a non-zero exit. CHECK is not used:
 * portmap 1.1's CHECK fails on a host without ip6tables chains.
 *
 *   ADD:   plugins in list order, each given the previous one's result (prevResult)
 *   DEL:   plugins in reverse order, each given the final ADD result; a plugin's
 *          failure is remembered and the rest still run (a teardown goes as far as it can)
 *
 * libcni caches ADD results on disk for a later DEL; here the caller keeps
 * the result (the alloc's state) and hands it back.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { O_CLOEXEC_FLAG, pipe2, sysClose, sysWrite } from "../../runtime/libc.ts";
import { runCollected, TOOL_PATH } from "../../runtime/spawn.ts";
import { outputTail } from "../../lib/output-tail.ts";

/**
 * A plugin's config travels on a pipe written whole before the plugin starts,
 * so it must fit the pipe's buffer (Linux's default, 64 KiB); Nomad's conflist
 * with a few hundred port mappings is well below.
 */
const MAX_CONFIG_BYTES = 65_536;

/** The CNI spec version of the lists drover builds (Nomad's bridge conflist names the same). */
export const CNI_VERSION = "0.4.0";

/** One plugin's config within a list: its `type` names the executable. */
const PluginConfigSchema = v.looseObject({ type: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]+$/, "must be a plugin file name")) });

export const NetworkConfigListSchema = v.object({
  cniVersion: v.string(),
  name: v.string(),
  plugins: v.pipe(v.array(PluginConfigSchema), v.minLength(1, "must list a plugin")),
});
export type NetworkConfigList = v.InferOutput<typeof NetworkConfigListSchema>;

/** The parts of a CNI result drover reads; the whole result is kept and passed on as it came. */
export const CniResultSchema = v.looseObject({
  interfaces: v.optional(v.array(v.looseObject({ name: v.string(), sandbox: v.optional(v.string()) }))),
  ips: v.optional(v.array(v.looseObject({ address: v.string(), interface: v.optional(v.number()) }))),
  dns: v.optional(v.looseObject({ nameservers: v.optional(v.array(v.string())) })),
});
export type CniResult = v.InferOutput<typeof CniResultSchema>;

/** The container a call is about (CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME) and what the runtime passes per call. */
export interface CniAttachment {
  containerId: string;
  netns: string;
  ifName: string;
  /** runtimeConfig, for plugins whose capabilities ask for it (portmap's portMappings). */
  runtimeConfig: Record<string, unknown>;
}

export class CniError extends Error {
  override name = "CniError";
}

/** Calls plugins from `cniPath` (a colon-separated list of directories, as CNI_PATH is). */
export class CniRunner {
  constructor(private readonly cniPath: string) {}

  /** The executable of plugin `type`, or undefined when no directory of the path has it. */
  findPlugin(type: string): string | undefined {
    return this.cniPath
      .split(":")
      .filter(Boolean)
      .map((dir) => join(dir, type))
      .find((file) => existsSync(file));
  }

  async add(list: NetworkConfigList, at: CniAttachment): Promise<CniResult> {
    let previous: CniResult | undefined;
    for (const plugin of list.plugins) {
      const out = await this.call("ADD", list, plugin, at, previous);
      previous = parseResult(plugin.type, out);
    }
    return previous ?? {};
  }

  /** Every plugin's DEL, in reverse; throws the first failure once all have been called. */
  async del(list: NetworkConfigList, at: CniAttachment, result: CniResult | undefined): Promise<void> {
    let first: unknown;
    for (const plugin of [...list.plugins].reverse()) {
      try {
        await this.call("DEL", list, plugin, at, result);
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }

  private async call(command: "ADD" | "DEL", list: NetworkConfigList, plugin: NetworkConfigList["plugins"][number], at: CniAttachment, prevResult: CniResult | undefined): Promise<string> {
    const executable = this.findPlugin(plugin.type);
    if (!executable) throw new CniError(`CNI plugin "${plugin.type}" not found in ${this.cniPath}`);
    const config = {
      ...plugin,
      cniVersion: list.cniVersion,
      name: list.name,
      ...(prevResult ? { prevResult } : {}),
      ...(pluginCapabilities(plugin, at.runtimeConfig) ?? {}),
    };
    const bytes = Buffer.from(JSON.stringify(config));
    if (bytes.length > MAX_CONFIG_BYTES) throw new CniError(`CNI plugin ${plugin.type}: its config is ${bytes.length} bytes, over ${MAX_CONFIG_BYTES}`);
    // The spawn seam takes no stdin pipe: the config is written into one first, and its read end is the plugin's stdin.
    const [stdin, input] = pipe2(O_CLOEXEC_FLAG);
    let collected;
    try {
      try {
        sysWrite(input, bytes);
      } finally {
        sysClose(input);
      }
      collected = await runCollected({
        argv: [executable],
        env: {
          CNI_COMMAND: command,
          CNI_CONTAINERID: at.containerId,
          CNI_NETNS: at.netns,
          CNI_IFNAME: at.ifName,
          CNI_PATH: this.cniPath,
          // The plugins call iptables and sysctl by name.
          PATH: TOOL_PATH,
        },
        stdin,
      });
    } finally {
      sysClose(stdin);
    }
    const { status, stdout, stderr } = collected;
    if (status.exitCode !== 0 || status.signal !== 0) {
      throw new CniError(`CNI plugin ${plugin.type} ${command} failed: ${outputTail(errorText(stdout)) || stderr.trim() || `exit ${status.exitCode}`}`);
    }
    return stdout.trim();
  }
}

/** runtimeConfig carries only what the plugin declares it takes (CNI's capabilities convention). */
function pluginCapabilities(plugin: Record<string, unknown>, runtimeConfig: Record<string, unknown>): { runtimeConfig: Record<string, unknown> } | undefined {
  const capabilities = plugin.capabilities;
  if (typeof capabilities !== "object" || capabilities === null) return undefined;
  const wanted = Object.entries(capabilities).filter(([, on]) => on === true).map(([name]) => name);
  const given = Object.fromEntries(wanted.filter((name) => name in runtimeConfig).map((name) => [name, runtimeConfig[name]]));
  return Object.keys(given).length > 0 ? { runtimeConfig: given } : undefined;
}

/** An ADD's answer; one that is not a result fails naming the plugin (a bare JSON or schema error names nothing). */
function parseResult(type: string, out: string): CniResult {
  try {
    return v.parse(CniResultSchema, JSON.parse(out || "{}"));
  } catch {
    throw new CniError(`CNI plugin ${type} ADD answered no CNI result: ${outputTail(out)}`);
  }
}

/** A plugin's error object ({code, msg, details}) as one line. */
function errorText(stdout: string): string {
  try {
    const error = JSON.parse(stdout) as { msg?: unknown; details?: unknown };
    return [error.msg, error.details].filter((part) => typeof part === "string" && part !== "").join(": ");
  } catch {
    return stdout.trim();
  }
}
