/**
 * The default syscall filter of exec tasks, in the spirit of Docker's default
 * seccomp profile: calls that reach past the task's box (new namespaces,
 * mounts, the kernel keyring, BPF, kernel modules, the clock, swap, reboot,
 * ...) fail with EPERM; everything else runs. Most of these already need a
 * capability the task lacks; the filter closes the ones that do not (a user
 * namespace, in which a task holds every capability, keyctl, perf, io_uring,
 * whose operations a filter cannot see) and stays when capabilities are
 * given back.
 *
 * The program, for the host's architecture:
 *
 *   arch != native                      -> kill the process (another ABI's numbers differ)
 *   x86_64: nr has the x32 bit           -> EPERM
 *   for each rule:  nr == rule's call    -> EPERM   (clone: only with a namespace flag;
 *                                                   clone3: ENOSYS, so libc falls back to clone)
 *   otherwise                            -> allow
 *
 * A job may lift rules by name (`syscall_add`) where the operator allows it
 * (`allow_syscalls` in the exec plugin's config).
 */
import { errnoVerdict, jumpIfAnyBit, jumpIfAtLeast, jumpIfEqual, load, ret, SECCOMP_DATA, SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS, type Instruction } from "./bpf.ts";
import { FILTERED_SYSCALLS, type FilteredSyscall } from "../../lib/syscall-filter.ts";
import { CLONE_NEWCGROUP, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUSER, CLONE_NEWUTS } from "../../runtime/libc.ts";
import { AUDIT_ARCH, syscallNumber, X32_SYSCALL_BIT, type SyscallArch } from "./syscalls.ts";

const EPERM = 1;
const ENOSYS = 38;

// clone(2) flags that make a namespace. CLONE_NEWTIME (0x80) is left out: in
// clone()'s flags that bit belongs to the exit signal; clone3 and unshare are
// refused whole.
export const CLONE_NAMESPACE_FLAGS = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;

export interface SyscallRule {
  call: FilteredSyscall;
  /** The errno the call fails with (EPERM unless said). */
  errno?: number;
  /** Refuse only when the first argument has one of these bits set. */
  firstArgBits?: number;
}

/** How each call is refused, where it is not simply EPERM. */
const SPECIAL: Partial<Record<FilteredSyscall, Omit<SyscallRule, "call">>> = {
  clone: { firstArgBits: CLONE_NAMESPACE_FLAGS },
  clone3: { errno: ENOSYS },
};

/** One rule per refused call (lib/syscall-filter.ts names them and says why). */
export const DEFAULT_RULES: readonly SyscallRule[] = FILTERED_SYSCALLS.map((call) => ({ call, ...SPECIAL[call] }));

/** The filter for `arch`, without the rules named in `lifted`. */
export function buildFilter(arch: SyscallArch, lifted: readonly FilteredSyscall[] = []): Instruction[] {
  const program: Instruction[] = [
    load(SECCOMP_DATA.arch),
    jumpIfEqual(AUDIT_ARCH[arch], 1, 0),
    ret(SECCOMP_RET_KILL_PROCESS),
    load(SECCOMP_DATA.nr),
  ];
  if (arch === "x64") program.push(jumpIfAtLeast(X32_SYSCALL_BIT, 0, 1), ret(errnoVerdict(EPERM)));
  for (const { call, errno = EPERM, firstArgBits } of DEFAULT_RULES) {
    const nr = syscallNumber(arch, call);
    if (nr === undefined || lifted.includes(call)) continue;
    if (firstArgBits === undefined) {
      program.push(jumpIfEqual(nr, 0, 1), ret(errnoVerdict(errno)));
      continue;
    }
    // The call with a flagged first argument fails; without one it is allowed at once (A now holds the argument).
    program.push(
      jumpIfEqual(nr, 0, 4),
      load(SECCOMP_DATA.argLow(0)),
      jumpIfAnyBit(firstArgBits, 0, 1),
      ret(errnoVerdict(errno)),
      ret(SECCOMP_RET_ALLOW),
    );
  }
  program.push(ret(SECCOMP_RET_ALLOW));
  return program;
}
