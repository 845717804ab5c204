/**
 * Checks, before anything is built, what the server could not know about this
 * node: that the task's driver runs here and can read its config, that its
 * user exists, and that the job asks for nothing this client cannot run
 * (Vault, Consul Connect, CSI, other network modes). A job keeps
 * every block it was written with; a block the client cannot run fails the
 * task here with an event that names it. Failures are final (Failed
 * Validation): retrying cannot fix them.
 */
import * as v from "valibot";
import { lookupUser } from "../../../runtime/libc.ts";
import { driverConfigSchema, isKnownDriver } from "../../../structs/driver-config.ts";
import { NETWORK_MODES, type Task, type TaskGroup } from "../../../structs/job.ts";
import { TASK_EVENT } from "../../../structs/task-state.ts";
import { taskEvent } from "../task-state.ts";
import { UnrecoverableHookError, type PrestartRequest, type TaskHook } from "./hook.ts";
import { taskUser } from "./task-dir.ts";
import { allocTaskGroup } from "../../../structs/alloc.ts";

export interface DriverHealth {
  healthy: boolean;
  description: string;
}

/** Why this client cannot run what `task` (in `group`) asks for, one line per block. */
export function unsupportedBlocks(task: Task, group: TaskGroup | undefined): string[] {
  const problems: string[] = [];
  if (task.Vault) problems.push('the "vault" block needs Vault, which drover does not have');
  if (task.CSIPluginConfig) problems.push('the "csi_plugin" block is not supported by drover (no CSI)');
  if ([...task.Services, ...(group?.Services ?? [])].some((service) => service.Connect)) {
    problems.push('the "connect" block needs Consul Connect, which drover does not have');
  }
  for (const mount of task.VolumeMounts) {
    const volume = group?.Volumes[mount.Volume];
    if (volume && volume.Type !== "host") problems.push(`volume "${mount.Volume}" is of type "${volume.Type}"; drover mounts only host volumes`);
  }
  problems.push(...unsupportedNomad1Blocks(task, group));
  for (const network of [...(group?.Networks ?? []), ...task.Resources.Networks]) {
    if (!(NETWORK_MODES as readonly string[]).includes(network.Mode)) {
      problems.push(`network mode "${network.Mode}" is not supported by drover (use ${NETWORK_MODES.map((m) => `"${m}"`).join(" or ")})`);
    }
  }
  return problems;
}

/** Nomad 1.x's blocks that ask for something drover's client does not do. */
function unsupportedNomad1Blocks(task: Task, group: TaskGroup | undefined): string[] {
  const problems: string[] = [];
  // Tokens go where Nomad puts them (hooks/identity.ts): a file of the operator's choosing is not done.
  for (const identity of [...(task.Identity ? [task.Identity] : []), ...(task.Identities ?? [])]) {
    if (identity.Filepath !== "") problems.push(`identity "${identity.Name || "default"}": "filepath" is not supported by drover (the token is in secrets/)`);
  }
  if (task.Resources.Cores > 0) problems.push('"cores" reserves whole CPU cores, which drover does not do (use "cpu")');
  if (task.Resources.NUMA && task.Resources.NUMA.Affinity !== "none") problems.push('the "numa" block is not supported by drover');
  if (task.Schedule) problems.push('the "schedule" block is not supported by drover');
  task.Templates.forEach((template, i) => {
    if (template.ChangeMode === "script") problems.push(`template ${i}: change_mode "script" is not supported by drover (use "restart", "signal" or "noop")`);
    if (template.Uid !== null || template.Gid !== null) problems.push(`template ${i}: "uid" and "gid" are not supported by drover (the file belongs to the task's user)`);
  });
  task.Artifacts.forEach((artifact, i) => {
    if (artifact.GetterHeaders) problems.push(`artifact ${i}: "headers" are not supported by drover`);
    if (artifact.Chown) problems.push(`artifact ${i}: "chown" is not supported by drover`);
  });
  for (const mount of task.VolumeMounts) {
    if (group?.Volumes[mount.Volume]?.PerAlloc) problems.push(`volume "${mount.Volume}": "per_alloc" is not supported by drover`);
  }
  return problems;
}

export function validateHook(driverHealth: (driver: string) => DriverHealth | undefined): TaskHook {
  return {
    name: "validate",
    async prestart(req: PrestartRequest) {
      const problems: string[] = [];
      const health = driverHealth(req.task.Driver);
      if (!health) problems.push(`driver "${req.task.Driver}" is not available on this node`);
      else if (!health.healthy) problems.push(`driver "${req.task.Driver}" is unhealthy: ${health.description}`);
      if (isKnownDriver(req.task.Driver)) {
        const config = v.safeParse(driverConfigSchema(req.task.Driver), req.task.Config);
        if (!config.success) problems.push(`failed to decode driver config: ${config.issues.map((issue) => `${v.getDotPath(issue) ?? "config"}: ${issue.message}`).join(", ")}`);
      }
      const group = allocTaskGroup(req.alloc);
      problems.push(...unsupportedBlocks(req.task, group));
      const user = taskUser(req.task);
      if (user !== undefined && !lookupUser(user)) problems.push(`user "${user}" does not exist on this node`);
      if (problems.length === 0) return;
      const message = problems.join("; ");
      throw new UnrecoverableHookError(message, taskEvent(TASK_EVENT.FailedValidation, { ValidationError: message, FailsTask: true }));
    },
  };
}
