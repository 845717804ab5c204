/**
 * The system calls the default filter names, by architecture: their numbers
 * on x86_64 (asm/unistd_64.h) and arm64 (asm-generic/unistd.h), and the
 * AUDIT_ARCH value seccomp reports for each. A call an architecture does not
 * have is absent from its table (arm64 never had create_module, iopl, ...).
 */
import type { FilteredSyscall } from "../../lib/syscall-filter.ts";

export type SyscallArch = "x64" | "arm64";

/** AUDIT_ARCH_* (linux/audit.h): what seccomp_data.arch holds for a native call. */
export const AUDIT_ARCH: Readonly<Record<SyscallArch, number>> = {
  x64: 0xc000003e,
  arm64: 0xc00000b7,
};

/** On x86_64, calls of the x32 ABI carry this bit in their number; drover's tasks are 64-bit. */
export const X32_SYSCALL_BIT = 0x40000000;

/** Numbers both architectures share (the unified table from 424 on). */
const UNIFIED = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  clone3: 435,
  mount_setattr: 442,
  quotactl_fd: 443,
} as const;

export const SYSCALLS = {
  x64: {
    ...UNIFIED,
    acct: 163,
    add_key: 248,
    adjtimex: 159,
    bpf: 321,
    clock_adjtime: 305,
    clock_settime: 227,
    clone: 56,
    create_module: 174,
    delete_module: 176,
    fanotify_init: 300,
    finit_module: 313,
    get_kernel_syms: 177,
    init_module: 175,
    ioperm: 173,
    iopl: 172,
    kexec_file_load: 320,
    kexec_load: 246,
    keyctl: 250,
    lookup_dcookie: 212,
    mount: 165,
    nfsservctl: 180,
    open_by_handle_at: 304,
    perf_event_open: 298,
    pivot_root: 155,
    query_module: 178,
    quotactl: 179,
    reboot: 169,
    request_key: 249,
    setdomainname: 171,
    sethostname: 170,
    setns: 308,
    settimeofday: 164,
    swapoff: 168,
    swapon: 167,
    syslog: 103,
    sysfs: 139,
    umount2: 166,
    unshare: 272,
    uselib: 134,
    userfaultfd: 323,
    ustat: 136,
    vhangup: 153,
    _sysctl: 156,
  },
  arm64: {
    ...UNIFIED,
    acct: 89,
    add_key: 217,
    adjtimex: 171,
    bpf: 280,
    clock_adjtime: 266,
    clock_settime: 112,
    clone: 220,
    delete_module: 106,
    fanotify_init: 262,
    finit_module: 273,
    init_module: 105,
    kexec_file_load: 294,
    kexec_load: 104,
    keyctl: 219,
    lookup_dcookie: 18,
    mount: 40,
    nfsservctl: 42,
    open_by_handle_at: 265,
    perf_event_open: 241,
    pivot_root: 41,
    quotactl: 60,
    reboot: 142,
    request_key: 218,
    setdomainname: 162,
    sethostname: 161,
    setns: 268,
    settimeofday: 170,
    swapoff: 225,
    swapon: 224,
    syslog: 116,
    umount2: 39,
    unshare: 97,
    userfaultfd: 282,
    vhangup: 58,
  },
} as const satisfies Record<SyscallArch, Partial<Record<FilteredSyscall, number>>>;


/** This process's architecture as the tables name it, or undefined where drover has no table. */
export function hostSyscallArch(arch: string = process.arch): SyscallArch | undefined {
  return arch === "x64" || arch === "arm64" ? arch : undefined;
}

/** The number of `name` on `arch`, or undefined where that architecture lacks the call. */
export function syscallNumber(arch: SyscallArch, name: FilteredSyscall): number | undefined {
  return (SYSCALLS[arch] as Readonly<Record<string, number>>)[name];
}
