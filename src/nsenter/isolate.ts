/**
 * `drover nsenter <spec>`: turns this process into the isolated task.
 *
 *   executor --unshare(PID), spawn, setns back-->  nsenter: PID 1 of a new PID namespace
 *                                                   (pid_mode "host": spawned plainly, in the host's)
 *     1. identity looked up     host user database, before the chroot hides it
 *     2. cgroups, oom, rlimits  host cgroupfs and /proc, still root; the devices cgroup lets
 *                               the task's device nodes through
 *     3. namespaces             [the alloc's network joined,] mount, UTS (hostname), cgroup [, IPC unless ipc_mode "host"] [, network];
 *                               then the spec's sysctls, which the kernel keeps per namespace
 *     4. root filesystem        tmpfs over the task dir, binds, /dev, /proc, host secrets
 *                               masked, pivot_root; stdout/stderr reopened through /alloc
 *     5. identity assumed       groups, uid, capabilities, no_new_privs
 *     6. syscall filter         seccomp (seccomp/profile.ts), from here on for good (unless privileged)
 *     7. execve                 the task: PID 1 of its namespace, the executor's child
 *
 * Any failure before step 6 ends the process with EXIT_SETUP_FAILED and a
 * message on stderr (the task's stderr); nothing it did outlives it, because
 * every mount lives in the mount namespace that dies with it.
 */
import { becomeTask } from "./become.ts";
import { IsolationError } from "./errors.ts";
import { assumeIdentity, resolveIdentity } from "./identity.ts";
import { unshareTaskNamespaces } from "./namespaces.ts";
import { allowDeviceNodes, applyRlimits, joinCgroups, setOomScoreAdj } from "./resources.ts";
import { buildRootfs } from "./rootfs.ts";
import { installSyscallFilter } from "./seccomp/install.ts";
import { setSysctls } from "./sysctls.ts";
import type { IsolationSpec } from "./spec.ts";
import { hostStdio, reopenStdio } from "./stdio.ts";

export function isolateTask(spec: IsolationSpec): never {
  // Only PID 1 of the namespace mounts a /proc that shows the task's processes alone; pid_mode "host" wants the host's.
  if (spec.pidMode === "private" && process.pid !== 1) throw new IsolationError("not PID 1 of a new PID namespace: start the role with startIsolatedTask()");
  const identity = resolveIdentity(spec.user, spec.capabilities);
  allowDeviceNodes(spec.cgroups, spec.devices);
  joinCgroups(spec.cgroups);
  setOomScoreAdj(spec.oomScoreAdj);
  applyRlimits(spec.rlimits);
  unshareTaskNamespaces(spec.hostname, spec.network, spec.ipcMode, spec.netns);
  // The alloc's bridge namespace is the task's own network (net.* sysctls act on it, not on the host's).
  setSysctls(spec.sysctls, { network: spec.network === "host" && spec.netns === undefined, ipcMode: spec.ipcMode });
  const stdio = hostStdio(spec.allocDir);
  buildRootfs(spec, identity);
  reopenStdio(stdio);
  assumeIdentity(identity);
  if (spec.syscallFilter) installSyscallFilter(spec.allowSyscalls);
  return becomeTask(spec.argv, spec.env, spec.cwd);
}
