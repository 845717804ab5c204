/**
 * The exec driver: each task isolated the way Nomad's exec driver isolates
 * it (own PID, mount, IPC and UTS namespaces, a chroot of read-only host
 * dirs, the task's user with a reduced capability set, its cgroup), with no
 * container runtime. The executor starts `drover nsenter <spec>`, which
 * builds the isolation and becomes the task; everything else (waiting,
 * reaping, kills, stats, the exit file) is the same executor as raw_exec's.
 *
 * Whether this host can isolate is found once at agent start
 * (detectIsolation); when it cannot, the driver reports itself unhealthy with
 * the reason and jobs asking for it are refused with that reason.
 *
 * A job may share the host's PID or IPC namespace (`pid_mode`, `ipc_mode` =
 * "host"; the plugin's default_pid_mode/default_ipc_mode otherwise) and
 * change its capabilities (`cap_add`, `cap_drop`), adding only those in the
 * plugin's `allow_caps`, as Nomad 1.x's exec driver does.
 *
 * Every task runs under the default syscall filter (nsenter/seccomp/). A job
 * may lift some of its calls with `config { syscall_add = [...] }`, only those
 * the operator lists in the plugin's `allow_syscalls`; anything else is
 * refused before an executor starts.
 */
import * as v from "valibot";
import { taskCapabilities, type CapabilityName } from "../lib/capabilities.ts";
import type { FilteredSyscall } from "../lib/syscall-filter.ts";
import type { IsolationMode } from "../lib/isolation-mode.ts";
import { ExecDriverConfigSchema } from "../structs/driver-config.ts";
import { ValidationError } from "../lib/validation.ts";
import type { IsolationSupport } from "../nsenter/detect.ts";
import type { IsolationSpecInput } from "../nsenter/spec.ts";
import type { Fingerprint, ParsedTaskConfig } from "./driver.ts";
import { isolatedNetwork } from "./network.ts";
import { commandOf, ExecutorDriver, type ExecutorDriverOptions } from "./executor-driver.ts";

/** The user an exec task runs as when the job names none (Nomad's default). */
export const DEFAULT_EXEC_USER = "nobody";


/** The exec driver's `config` keys besides command and args (structs/driver-config.ts defines them). */
export const ExecConfigSchema = v.omit(ExecDriverConfigSchema, ["command", "args"]);
export type ExecConfig = v.InferOutput<typeof ExecConfigSchema>;

export interface ExecOptions extends ExecutorDriverOptions {
  support: IsolationSupport;
  /** client.chroot_env: host path -> path inside the task. */
  chrootEnv: Readonly<Record<string, string>>;
  /** What a root task keeps (and the bounding set of any task) unless the job's cap_add/cap_drop change it. */
  capabilities: readonly CapabilityName[];
  /** plugin "exec" { config { allow_caps } }: what cap_add may ask for; every capability when absent. */
  allowCaps?: readonly CapabilityName[] | undefined;
  /** plugin "exec" { config { default_pid_mode, default_ipc_mode } }: for tasks that set none. */
  defaultPidMode?: IsolationMode;
  defaultIpcMode?: IsolationMode;
  /** plugin "exec" { config { allow_syscalls } }: the filtered calls a job may ask for. */
  allowSyscalls?: readonly FilteredSyscall[];
}

export class ExecDriver extends ExecutorDriver<ExecConfig> {
  readonly name = "exec";
  protected readonly configSchema = ExecConfigSchema;
  protected readonly cgroupPlacement = "isolated";

  constructor(private readonly exec: ExecOptions) {
    super(exec);
  }

  fingerprint(): Fingerprint {
    if (!this.exec.support.available) {
      return { detected: true, healthy: false, description: this.exec.support.reason, attributes: {} };
    }
    return { detected: true, healthy: true, description: "healthy", attributes: { "driver.exec": "1" } };
  }

  /** The spec the nsenter role builds the task from; the executor adds the task's cgroups. */
  protected isolation(config: ParsedTaskConfig, driverConfig: ExecConfig): IsolationSpecInput {
    if (!config.allocDir) throw new Error("the exec driver needs the task config's allocDir");
    const allowed = this.exec.allowSyscalls ?? [];
    const asked = driverConfig.syscall_add ?? [];
    const refused = asked.filter((call) => !allowed.includes(call));
    if (refused.length > 0) {
      throw new ValidationError("config", [`syscall_add: ${refused.join(", ")} not allowed on this client (plugin "exec" allow_syscalls: ${allowed.join(", ") || "none"})`]);
    }
    const capabilities = taskCapabilities(this.exec.capabilities, this.exec.allowCaps, driverConfig.cap_add ?? [], driverConfig.cap_drop ?? []);
    if ("notAllowed" in capabilities) {
      throw new ValidationError("config", [`cap_add: ${capabilities.notAllowed.join(", ")} not allowed on this client (plugin "exec" allow_caps: ${this.exec.allowCaps?.join(", ") || "none"})`]);
    }
    return {
      argv: commandOf(config),
      env: config.env,
      user: config.user ?? DEFAULT_EXEC_USER,
      taskDir: config.cwd,
      allocDir: config.allocDir,
      chrootEnv: { ...this.exec.chrootEnv },
      ...isolatedNetwork(config),
      capabilities: capabilities.capabilities,
      pidMode: driverConfig.pid_mode ?? this.exec.defaultPidMode ?? "private",
      ipcMode: driverConfig.ipc_mode ?? this.exec.defaultIpcMode ?? "private",
      devices: config.devices,
      mounts: config.mounts,
      volumes: config.volumes,
      allowSyscalls: [...asked],
    };
  }
}
