/**
 * The raw_exec driver: runs the task's command as it stands, with no
 * isolation beyond its cgroup (limits, accounting, a complete kill list).
 * Nomad enables it only when the operator asks (plugin "raw_exec" { config {
 * enabled = true } }), since its tasks run with the agent's privileges.
 */
import type { Fingerprint, ParsedTaskConfig } from "./driver.ts";
import { BaseDriverConfigSchema, commandOf, ExecutorDriver, type ExecutorDriverOptions } from "./executor-driver.ts";
import { rawExecArgv } from "./network.ts";

export interface RawExecOptions extends ExecutorDriverOptions {
  /** plugin.raw_exec.config.enabled */
  enabled: boolean;
}

export class RawExecDriver extends ExecutorDriver {
  readonly name = "raw_exec";
  protected readonly configSchema = BaseDriverConfigSchema;
  /** Not isolated: no devices allow-list, and no hierarchy it does not need. */
  protected readonly cgroupPlacement = "accounting";

  constructor(private readonly rawExec: RawExecOptions) {
    super(rawExec);
  }

  fingerprint(): Fingerprint {
    if (!this.rawExec.enabled) return { detected: false, healthy: false, description: "disabled", attributes: {} };
    return { detected: true, healthy: true, description: "healthy", attributes: { "driver.raw_exec": "1" } };
  }

  /** In a bridge group, behind nsenter --net (drivers/network.ts). */
  protected override launchArgv(config: ParsedTaskConfig): [string, ...string[]] {
    return rawExecArgv(config, commandOf(config));
  }

  /** nsenter takes on the user in bridge mode: the executor keeps root for the setns. */
  protected override launchUser(config: ParsedTaskConfig): string | undefined {
    return config.network === "bridge" ? undefined : config.user;
  }

  /** raw_exec starts the command itself: no isolation spec. */
  protected isolation(): undefined {
    return undefined;
  }
}
