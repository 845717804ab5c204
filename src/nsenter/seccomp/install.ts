/**
 * Installing the filter on the calling thread, the nsenter role's JS thread,
 * just before it execs the task: the filter stays across execve and every
 * child the task makes inherits it. It must come after the role's own mounts
 * and namespace calls (the filter refuses them) and after no_new_privs (the
 * kernel takes a filter from a process without CAP_SYS_ADMIN only then).
 * Bun's other threads never get it; execve ends them.
 */
import { installSeccompFilter } from "../../runtime/libc.ts";
import { IsolationError, must } from "../errors.ts";
import { encode } from "./bpf.ts";
import type { FilteredSyscall } from "../../lib/syscall-filter.ts";
import { buildFilter } from "./profile.ts";
import { hostSyscallArch } from "./syscalls.ts";

export function installSyscallFilter(lifted: readonly FilteredSyscall[]): void {
  const arch = hostSyscallArch();
  if (!arch) throw new IsolationError(`no syscall filter for architecture ${process.arch}`);
  must(installSeccompFilter(encode(buildFilter(arch, lifted))), "install the syscall filter");
}
