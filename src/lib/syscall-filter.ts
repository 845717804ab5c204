/**
 * The system calls an exec task's default filter refuses, by name, grouped by
 * why. The filter itself (numbers, BPF) is the nsenter role's
 * (nsenter/seccomp/); these names are what an operator may allow
 * (`plugin "exec" { config { allow_syscalls } }`) and a job may then ask for
 * (`config { syscall_add }`).
 */
import * as v from "valibot";

export const FILTERED_SYSCALLS = [
  // New namespaces: in a user namespace a task holds every capability (and may mount a cgroupfs).
  // clone is refused only with a namespace flag; clone3 fails with ENOSYS, so libc falls back to clone.
  "unshare", "setns", "clone", "clone3",
  // Mounts, old and new API.
  "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
  // The kernel keyring is not namespaced.
  "add_key", "request_key", "keyctl",
  // BPF, perf events, userfaultfd, io_uring (a filter cannot see its operations), fanotify.
  "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init",
  // Kernel modules, kexec, reboot.
  "init_module", "finit_module", "delete_module", "create_module", "get_kernel_syms", "query_module", "kexec_load", "kexec_file_load", "reboot",
  // The clock is the host's.
  "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
  // Host administration: swap, quotas, accounting, the kernel log, names, I/O ports, file handles.
  "swapon", "swapoff", "quotactl", "quotactl_fd", "acct", "syslog", "sethostname", "setdomainname", "vhangup", "iopl", "ioperm", "open_by_handle_at",
  // Obsolete calls nothing needs.
  "lookup_dcookie", "_sysctl", "uselib", "ustat", "sysfs", "nfsservctl",
] as const;
export type FilteredSyscall = (typeof FILTERED_SYSCALLS)[number];

export const FilteredSyscallSchema = v.picklist(FILTERED_SYSCALLS, `must name a call the default syscall filter refuses (${FILTERED_SYSCALLS.join(", ")})`);
