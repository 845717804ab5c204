/**
 * `drover nsenter --exec <task pid> <spec>`: turns this process into a
 * command running inside a running task (`drover alloc exec`).
 *
 *   executor --setns(task's PID ns), spawn, setns back-->  nsenter, in the task's PID namespace
 *     1. identity looked up   host user database
 *     2. cgroups, rlimits     the task's cgroups, so the command is limited and counted with it
 *     3. namespaces           UTS, IPC, network, cgroup, then mount (lands at the task's root)
 *     4. identity assumed     as for the task
 *     5. syscall filter       the task's own (its lifted rules included)
 *     6. execve               the command, with the stdio the executor gave
 */
import { becomeTask } from "./become.ts";
import { assumeIdentity, resolveIdentity } from "./identity.ts";
import { joinTaskNamespaces } from "./namespaces.ts";
import { applyRlimits, joinCgroups } from "./resources.ts";
import { installSyscallFilter } from "./seccomp/install.ts";
import type { ExecSpec } from "./spec.ts";

export function enterTask(taskPid: number, spec: ExecSpec): never {
  const identity = resolveIdentity(spec.user, spec.capabilities);
  joinCgroups(spec.cgroups);
  applyRlimits(spec.rlimits);
  joinTaskNamespaces(taskPid);
  assumeIdentity(identity);
  installSyscallFilter(spec.allowSyscalls);
  return becomeTask(spec.argv, spec.env, spec.cwd);
}
