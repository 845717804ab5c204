/**
 * Loading the agent configuration from `-config` files and directories, in
 * order, then the command-line flags on top:
 *
 *   schema defaults < -dev defaults < config files (in the order given) < flags
 *
 * Each file is validated on its own so an error names the file; the merge is
 * validated again to fill defaults. HCL (.hcl, .nomad) and JSON (.json) are
 * accepted; a directory contributes its .hcl and .json files in name order.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { collapseBlocks, deepMerge, HclSyntaxError, parseHcl } from "../lib/hcl.ts";
import { parseOrThrow } from "../lib/validation.ts";
import { AgentConfigSchema, type AgentConfig } from "./schema.ts";

/** A configuration problem: start-up stops with this message. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ConfigOverrides {
  dev: boolean;
  configPaths: readonly string[];
  dataDir?: string;
  bindAddr?: string;
  httpPort?: number;
  logLevel?: string;
  logJson?: boolean;
}

export interface LoadedConfig {
  config: AgentConfig;
  /** The files that contributed, in the order they were merged. */
  files: string[];
}

/** What -dev changes: a single-node server and client with raw_exec, on loopback. */
export const DEV_CONFIG: Readonly<Record<string, unknown>> = {
  bind_addr: "127.0.0.1",
  server: { enabled: true },
  client: { enabled: true },
  plugin: { raw_exec: { config: { enabled: true } } },
};

const CONFIG_EXTENSIONS = [".hcl", ".nomad", ".json"];

function expandPath(path: string): string[] {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new ConfigError(`config path ${path} does not exist`);
  }
  if (!stat.isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => CONFIG_EXTENSIONS.some((ext) => name.endsWith(ext)))
    .sort()
    .map((name) => join(path, name));
}

async function readConfigFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = path.endsWith(".json") ? JSON.parse(text) : await parseHcl(path, text);
  } catch (err) {
    if (err instanceof HclSyntaxError) throw new ConfigError(`config file ${err.message}`);
    if (err instanceof SyntaxError) throw new ConfigError(`config file ${path}: invalid JSON: ${err.message}`);
    throw err;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path}: expected an object at the top level`);
  }
  return collapseBlocks(parsed) as Record<string, unknown>;
}

function validate(input: unknown, source: string): AgentConfig {
  try {
    return parseOrThrow(AgentConfigSchema, input, source);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function flagsConfig(overrides: ConfigOverrides): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (overrides.dataDir !== undefined) out.data_dir = overrides.dataDir;
  if (overrides.bindAddr !== undefined) out.bind_addr = overrides.bindAddr;
  if (overrides.httpPort !== undefined) out.ports = { http: overrides.httpPort };
  if (overrides.logLevel !== undefined) out.log_level = overrides.logLevel;
  if (overrides.logJson !== undefined) out.log_json = overrides.logJson;
  return out;
}

export async function loadAgentConfig(overrides: ConfigOverrides): Promise<LoadedConfig> {
  const files = overrides.configPaths.flatMap((path) => expandPath(resolve(path)));
  let merged: Record<string, unknown> = overrides.dev ? { ...DEV_CONFIG } : {};
  for (const file of files) {
    const input = await readConfigFile(file);
    validate(input, `config file ${file}`);
    merged = deepMerge(merged, input);
  }
  merged = deepMerge(merged, flagsConfig(overrides));
  const config = validate(merged, "command-line flags");
  if (config.client.min_dynamic_port > config.client.max_dynamic_port) {
    throw new ConfigError(
      `client.min_dynamic_port (${config.client.min_dynamic_port}) is above client.max_dynamic_port (${config.client.max_dynamic_port})`,
    );
  }
  if (config.plugin.nvidia && config.plugin["nvidia-gpu"]) {
    throw new ConfigError('plugin "nvidia" and plugin "nvidia-gpu" are the same plugin: configure it once');
  }
  if (config.acl.enabled && !config.server.enabled) {
    throw new ConfigError("acl.enabled needs the embedded server (server.enabled): it holds the tokens and policies");
  }
  const remote = config.client.servers.length > 0;
  if (remote && config.server.enabled) {
    throw new ConfigError("client.servers names remote Nomad servers: set server.enabled = false (the embedded server serves only its own node)");
  }
  if (config.client.enabled && !config.server.enabled && !remote) {
    throw new ConfigError("client.enabled needs a server: set server.enabled = true, or name Nomad servers in client.servers");
  }
  return { config, files };
}
