/**
 * The configuration as the running agent applies it, for /v1/agent/self:
 * the loaded config with what start-up derived written in (the data dir
 * -dev made, the alloc and state dirs under it, the node name from the
 * hostname, and whether logs are JSON, which they are off a terminal even
 * without log_json), so the report never says one thing while the agent
 * does another.
 */
import type { AgentConfig } from "./schema.ts";

export interface DerivedConfig {
  dataDir: string;
  allocDir: string;
  stateDir: string;
  nodeName: string;
  logJson: boolean;
}

export function effectiveConfig(config: AgentConfig, derived: DerivedConfig): AgentConfig {
  return {
    ...config,
    name: derived.nodeName,
    data_dir: derived.dataDir,
    log_json: derived.logJson,
    client: { ...config.client, alloc_dir: derived.allocDir, state_dir: derived.stateDir },
  };
}
