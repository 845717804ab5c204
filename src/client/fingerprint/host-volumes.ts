/**
 * The node's host volumes (Nomad's Node.HostVolumes) from the config's
 * `client { host_volume "name" { path read_only } }`. As in Nomad, each path
 * must exist when the agent starts; drover also wants a directory, since that
 * is all it binds, so a typo stops start-up instead of failing jobs later.
 */
import { statSync } from "node:fs";
import { ConfigError } from "../../config/load.ts";
import type { AgentConfig } from "../../config/schema.ts";
import type { ClientHostVolume } from "../../structs/node.ts";

export function hostVolumes(config: AgentConfig): Record<string, ClientHostVolume> {
  return Object.fromEntries(
    Object.entries(config.client.host_volume).map(([name, volume]) => {
      let isDirectory: boolean;
      try {
        isDirectory = statSync(volume.path).isDirectory();
      } catch (err) {
        throw new ConfigError(`client.host_volume "${name}": path ${volume.path}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : (err as Error).message}`);
      }
      if (!isDirectory) throw new ConfigError(`client.host_volume "${name}": path ${volume.path} is not a directory`);
      return [name, { Name: name, Path: volume.path, ReadOnly: volume.read_only }];
    }),
  );
}
