/**
 * `drover nsenter --exec <task pid> <spec>`: turns this process into a
 * command running inside a running task (`drover alloc exec`).
 *
 *   executor --setns(task's PID ns), spawn, setns back-->  nsenter, in the task's PID namespace
 *     1. identity looked up   host user database
 *     2. cgroups, rlimits     the task's cgroups, so the command is limited and counted with it
 *     3. namespaces           UTS, IPC, network, cgroup, then mount (lands at the task's root)
 *     4. terminal             with `tty`: fd 0 given to the user, and taken as the controlling terminal
 *     5. identity assumed     as for the task
 *     6. syscall filter       the task's own (its lifted rules included; none if it has none)
 *     7. execve               the command, with the stdio the executor gave
 */
import { fchown } from "../runtime/libc.ts";
import { becomeTask, takeTerminal } from "./become.ts";
import { must } from "./errors.ts";
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
  if (spec.tty) {
    must(fchown(0, identity.uid, identity.gid), `give the terminal to user ${identity.user}`);
    takeTerminal();
  }
  assumeIdentity(identity);
  if (spec.syscallFilter) installSyscallFilter(spec.allowSyscalls);
  return becomeTask(spec.argv, spec.env, spec.cwd);
}
