/**
 * The few libc calls JavaScript runtimes do not offer (prctl, fcntl on pipes,
 * waitid, namespaces, file calls without node:fs), through ffi.ts: bun:ffi on
 * Bun, Deno.dlopen on Deno, the same declarations for both. libc is opened on
 * first use, so a process that never calls these pays nothing.
 *
 * Each wrapper returns the raw result; `-1` means failure and `errno()` says
 * why, as in C.
 *
 * A descriptor these calls create (pipe2, sysOpen, socket) is for these calls
 * only: Deno's node:fs refuses descriptors it did not open itself. The other
 * way round works on both runtimes.
 */
import { CString, dlopen, FFIType, type Library, ptr, read, type Pointer, type SymbolTable } from "./ffi.ts";

const SYMBOLS = {
  prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
  // fcntl and ioctl are variadic; the third argument is passed as a 64-bit word either way.
  fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.i32 },
  ioctl: { args: [FFIType.i32, FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  // syscall must be declared with all seven words or the trailing ones are garbage.
  syscall: {
    args: [FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64],
    returns: FFIType.i64,
  },
  waitid: { args: [FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  __errno_location: { args: [], returns: FFIType.ptr },
} as const;

/**
 * The functions of a table, bound from libc on first use. Each block below
 * has a table of its own, so a process binds only the calls it makes.
 */
function lazyLibc<T extends SymbolTable>(symbols: T): () => Library<T> {
  let bound: Library<T> | undefined;
  return () => (bound ??= dlopen("libc.so.6", symbols).symbols);
}

const lib = lazyLibc(SYMBOLS);

/** errno of the last failed call on this thread. */
export function errno(): number {
  return read.i32(lib().__errno_location() as Pointer, 0);
}

// prctl(2) options.
export const PR_SET_CHILD_SUBREAPER = 36;

export function prctl(option: number, arg2 = 0, arg3 = 0, arg4 = 0, arg5 = 0): number {
  return lib().prctl(option, arg2, arg3, arg4, arg5);
}

// fcntl(2) commands.
export const F_GETFL = 3;
export const F_SETFL = 4;
/** A copy of the descriptor at the lowest free number from the argument up, close-on-exec. */
export const F_DUPFD_CLOEXEC = 1030;
export const F_SETPIPE_SZ = 1031;
export const F_GETPIPE_SZ = 1032;

export function fcntl(fd: number, cmd: number, arg = 0): number {
  return lib().fcntl(fd, cmd, arg);
}

/** Bytes waiting to be read on a pipe or FIFO (ioctl FIONREAD), or -1. */
export function bytesReadable(fd: number): number {
  const FIONREAD = 0x541b;
  const out = new Int32Array(1);
  return lib().ioctl(fd, FIONREAD, ptr(out)) === 0 ? out[0]! : -1;
}

export const P_ALL = 0;
export const WNOHANG = 1;
export const WEXITED = 4;
export const WNOWAIT = 0x01000000;

/**
 * The pid of a child that has exited and not been reaped, without reaping it
 * (waitid WNOWAIT); 0 when there is none, -1 on error (ECHILD: no children).
 */
export function peekExitedChild(): number {
  // siginfo_t is 128 bytes; si_pid sits at offset 16 on Linux.
  const info = new Int32Array(32);
  const result = lib().waitid(P_ALL, 0, ptr(info), WEXITED | WNOHANG | WNOWAIT);
  if (result < 0) return -1;
  return info[4]!;
}

/** Reaps `pid` if it has exited; returns its raw wait status, or null when it has not. */
export function reap(pid: number): number | null {
  const status = new Int32Array(1);
  const result = lib().waitpid(pid, ptr(status), WNOHANG);
  return result === pid ? status[0]! : null;
}

/** A raw wait status as an exit code, or the signal that ended the process (exit code 128 + signal, as a shell says it). */
export function decodeWaitStatus(status: number): { exitCode: number; signal: number } {
  const signal = status & 0x7f;
  return signal === 0 ? { exitCode: (status >> 8) & 0xff, signal: 0 } : { exitCode: 128 + signal, signal };
}

// mount(2) / umount2(2), for the secrets tmpfs of a task dir.
const MOUNT_SYMBOLS = {
  mount: { args: [FFIType.cstring, FFIType.cstring, FFIType.cstring, FFIType.u64, FFIType.cstring], returns: FFIType.i32 },
  umount2: { args: [FFIType.cstring, FFIType.i32], returns: FFIType.i32 },
} as const;
const mountLib = lazyLibc(MOUNT_SYMBOLS);

export const MS_NOSUID = 0x2;
export const MS_NODEV = 0x4;
export const MS_NOEXEC = 0x8;
export const MNT_DETACH = 0x2;

function cstring(text: string): Buffer {
  return Buffer.from(`${text}\0`);
}

/** mount(2); returns 0 or -1 (see errno()). */
export function mount(source: string, target: string, fsType: string, flags: number, data: string): number {
  return mountLib().mount(ptr(cstring(source)), ptr(cstring(target)), ptr(cstring(fsType)), flags, ptr(cstring(data)));
}

/** umount2(2); returns 0 or -1 (see errno()). */
export function umount2(target: string, flags: number): number {
  return mountLib().umount2(ptr(cstring(target)), flags);
}

// ---------------------------------------------------------------------------
// FIFOs and in-kernel moves for the log pump (mkfifo, splice, tee, pipe2),
// its single-instance lock (flock), and poll. A table of their
// own so this block appends without touching the one above.

const PIPE_SYMBOLS = {
  mkfifo: { args: [FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  splice: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.u32], returns: FFIType.i64 },
  tee: { args: [FFIType.i32, FFIType.i32, FFIType.u64, FFIType.u32], returns: FFIType.i64 },
  pipe2: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  poll: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
  epoll_create1: { args: [FFIType.i32], returns: FFIType.i32 },
  epoll_ctl: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  epoll_wait: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  usleep: { args: [FFIType.u32], returns: FFIType.i32 },
} as const;

const pipeLib = lazyLibc(PIPE_SYMBOLS);

/** mkfifo(3): creates a FIFO with `mode` (less the umask); does not follow a symlink at `path`. */
export function mkfifo(path: string, mode: number): number {
  return pipeLib().mkfifo(cstring(path), mode);
}

export const SPLICE_F_MOVE = 1;
export const SPLICE_F_NONBLOCK = 2;

/**
 * splice(2) from a pipe to a file at `*offset` (advanced by the kernel): the
 * bytes leave the pipe only as they land in the file, so a process killed at
 * any moment loses none. Returns the bytes moved, or -1.
 */
export function spliceToFile(pipeFd: number, fileFd: number, offset: BigInt64Array, length: number, flags: number): number {
  return Number(pipeLib().splice(pipeFd, null, fileFd, offset, length, flags));
}

/** splice(2) between two pipes: moves buffer references, copying no byte. Returns the bytes moved, or -1. */
export function splicePipes(fromPipe: number, toPipe: number, length: number, flags: number): number {
  return Number(pipeLib().splice(fromPipe, null, toPipe, null, length, flags));
}

/** tee(2): copies up to `length` bytes from the head of one pipe into another without consuming them. */
export function tee(fromPipe: number, toPipe: number, length: number, flags: number): number {
  return Number(pipeLib().tee(fromPipe, toPipe, length, flags));
}

export const O_NONBLOCK_FLAG = 0o4000;
export const O_CLOEXEC_FLAG = 0o2000000;

/** pipe2(2): [readFd, writeFd]; throws SysError (EMFILE and the like). */
export function pipe2(flags: number): [number, number] {
  const fds = new Int32Array(2);
  if (pipeLib().pipe2(fds, flags) !== 0) fail("pipe2");
  return [fds[0]!, fds[1]!];
}

export const LOCK_EX = 2;
export const LOCK_NB = 4;

export function flock(fd: number, operation: number): number {
  return pipeLib().flock(fd, operation);
}

export const POLLIN = 0x1;

/** usleep(3): blocks the calling thread for `micros` µs (a poll(2) timeout counts whole milliseconds). */
export function usleep(micros: number): number {
  return pipeLib().usleep(micros);
}

/**
 * struct epoll_event: u32 events, then u64 data, packed on x86-64 (12 bytes)
 * and naturally aligned elsewhere (16). The data carries the watched fd.
 */
export const EPOLL_EVENT_BYTES = process.arch === "x64" ? 12 : 16;
export const EPOLL_EVENT_DATA_OFFSET = process.arch === "x64" ? 4 : 8;
const EPOLLIN = 0x1;
const EPOLL_CTL_ADD = 1;
const EPOLL_CTL_DEL = 2;
const epollCtlEvent = new Uint8Array(EPOLL_EVENT_BYTES);
const epollCtlView = new DataView(epollCtlEvent.buffer);

/** epoll_create1(2) with EPOLL_CLOEXEC (O_CLOEXEC's value); throws SysError. */
export function epollCreate(): number {
  const fd = pipeLib().epoll_create1(O_CLOEXEC_FLAG);
  return fd < 0 ? fail("epoll_create1") : fd;
}

/** Watches `fd` for input (level-triggered), the event's data the fd itself; 0, or -1 (see errno()). */
export function epollAdd(epollFd: number, fd: number): number {
  epollCtlView.setUint32(0, EPOLLIN, true);
  epollCtlView.setBigUint64(EPOLL_EVENT_DATA_OFFSET, BigInt(fd), true);
  return pipeLib().epoll_ctl(epollFd, EPOLL_CTL_ADD, fd, epollCtlEvent);
}

/** Stops watching `fd`; 0, or -1 (see errno()). Closing the fd does the same. */
export function epollDel(epollFd: number, fd: number): number {
  return pipeLib().epoll_ctl(epollFd, EPOLL_CTL_DEL, fd, epollCtlEvent);
}

/** epoll_wait(2) into `events` (room for `max`); the number of events, 0 on timeout, -1 on error. */
export function epollWait(epollFd: number, events: Uint8Array, max: number, timeoutMs: number): number {
  return pipeLib().epoll_wait(epollFd, events, max, timeoutMs);
}

/** poll(2) over `count` struct pollfd in `fds` (see runtime/event-loop.ts); the number ready, 0 on timeout, -1 on error. */
export function poll(fds: Int32Array, count: number, timeoutMs: number): number {
  return pipeLib().poll(fds, count, timeoutMs);
}

// ---------------------------------------------------------------------------
// Scheduling weight, for the log pump. A table of its own: only the logmon binds it.

const PRIORITY_SYMBOLS = {
  setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
} as const;

const priorityLib = lazyLibc(PRIORITY_SYMBOLS);

const PRIO_PROCESS = 0;

/** setpriority(2) on the calling thread (Linux gives each thread its own nice value); 0, or -1 and errno. */
export function setThreadNice(nice: number): number {
  return priorityLib().setpriority(PRIO_PROCESS, 0, nice);
}

// ---------------------------------------------------------------------------
// Namespaces, mounts and credentials, for the nsenter role. A separate table,
// opened on first use, so processes that never isolate a task never load it.
// Every call acts on the calling thread, which must be the JS thread that
// later calls execve (the runtime's other threads keep the host's namespaces).
// ---------------------------------------------------------------------------

const ISOLATION_SYMBOLS = {
  unshare: { args: [FFIType.i32], returns: FFIType.i32 },
  setns: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  pivot_root: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  chroot: { args: [FFIType.ptr], returns: FFIType.i32 },
  chdir: { args: [FFIType.ptr], returns: FFIType.i32 },
  sethostname: { args: [FFIType.ptr, FFIType.u64], returns: FFIType.i32 },
  setgroups: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  setresuid: { args: [FFIType.u32, FFIType.u32, FFIType.u32], returns: FFIType.i32 },
  setresgid: { args: [FFIType.u32, FFIType.u32, FFIType.u32], returns: FFIType.i32 },
  capset: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  getpwnam: { args: [FFIType.ptr], returns: FFIType.ptr },
  getpwuid: { args: [FFIType.u32], returns: FFIType.ptr },
  signal: { args: [FFIType.i32, FFIType.u64], returns: FFIType.u64 },
  sigprocmask: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
  execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  strerror: { args: [FFIType.i32], returns: FFIType.cstring },
} as const;

const isolationLib = lazyLibc(ISOLATION_SYMBOLS);

/** Loads the namespace and mount calls now; throws when this libc lacks one. */
export function loadIsolationCalls(): void {
  isolationLib();
}

/** The message for an errno value ("Operation not permitted"). */
export function strerror(code: number): string {
  return String(isolationLib().strerror(code));
}

// clone(2) / unshare(2) / setns(2) flags.
export const CLONE_FS = 0x200;
export const CLONE_NEWNS = 0x20000;
export const CLONE_NEWCGROUP = 0x02000000;
export const CLONE_NEWUTS = 0x04000000;
export const CLONE_NEWIPC = 0x08000000;
export const CLONE_NEWUSER = 0x10000000;
export const CLONE_NEWPID = 0x20000000;
export const CLONE_NEWNET = 0x40000000;

export function unshare(flags: number): number {
  return isolationLib().unshare(flags);
}

export function setns(fd: number, nstype: number): number {
  return isolationLib().setns(fd, nstype);
}

// More mount(2) flags (MS_NOSUID, MS_NODEV, MS_NOEXEC and MNT_DETACH are above).
export const MS_BIND = 0x1000;
export const MS_MOVE = 0x2000;
export const MS_REC = 0x4000;
export const MS_PRIVATE = 0x40000;

// mount_setattr(2) attributes (Linux 5.12+).
export const MOUNT_ATTR_RDONLY = 0x1;
export const MOUNT_ATTR_NOSUID = 0x2;
export const MOUNT_ATTR_NODEV = 0x4;
export const MOUNT_ATTR_NOEXEC = 0x8;
export const AT_RECURSIVE = 0x8000;
const AT_FDCWD = -100;
// Unified syscall numbers (the same on x86_64 and arm64 from 424 on).
const SYS_CLOSE_RANGE = 436;
const SYS_MOUNT_SETATTR = 442;
const CLOSE_RANGE_CLOEXEC = 0x4;

/** Sets mount attributes on the mount at `path` (and below it with AT_RECURSIVE). */
export function mountSetattr(path: string, flags: number, attrSet: number): number {
  return mountSetattrAt(AT_FDCWD, path, flags, attrSet);
}

/** mount_setattr(2) on `path` relative to `dirFd`; 0 or -1. */
function mountSetattrAt(dirFd: number, path: string, flags: number, attrSet: number): number {
  // struct mount_attr { u64 attr_set, attr_clr, propagation, userns_fd; }
  const attr = new BigUint64Array([BigInt(attrSet), 0n, 0n, 0n]);
  const target = cstring(path);
  return Number(lib().syscall(SYS_MOUNT_SETATTR, dirFd, Number(ptr(target)), flags, Number(ptr(attr)), attr.byteLength, 0));
}

// The new mount API (Linux 5.2+; mount_setattr on a detached tree 5.12+), for binds that
// land on a descriptor rather than a path, and are read-only from their first instant.
const SYS_OPEN_TREE = 428;
const SYS_MOVE_MOUNT = 429;
const OPEN_TREE_CLONE = 1;
const OPEN_TREE_CLOEXEC = 0o2000000;
const MOVE_MOUNT_F_EMPTY_PATH = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH = 0x40;

/** A detached copy of the mount tree at `path`, submounts included (a recursive bind not yet attached anywhere): a descriptor, or -1. */
export function openTreeClone(path: string): number {
  const source = cstring(path);
  return Number(lib().syscall(SYS_OPEN_TREE, AT_FDCWD, Number(ptr(source)), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE, 0, 0, 0));
}

/** Sets `attrSet` on every mount of the tree descriptor `fd` (from openTreeClone); 0 or -1. */
export function mountSetattrTree(fd: number, attrSet: number): number {
  return mountSetattrAt(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, attrSet);
}

/** Attaches the tree descriptor `treeFd` on the directory descriptor `targetFd` (no path is looked up); 0 or -1. */
export function moveMount(treeFd: number, targetFd: number): number {
  const empty = cstring("");
  return Number(lib().syscall(SYS_MOVE_MOUNT, treeFd, Number(ptr(empty)), targetFd, Number(ptr(empty)), MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH, 0));
}

// A new mount built key by key (fsopen, fsconfig, fsmount; Linux 5.2+): no one-page limit on
// its options, and overlayfs' "lowerdir+" (Linux 6.8+) adds its lower dirs one call each.
const SYS_FSOPEN = 430;
const SYS_FSCONFIG = 431;
const SYS_FSMOUNT = 432;
const FSOPEN_CLOEXEC = 1;
const FSMOUNT_CLOEXEC = 1;
const FSCONFIG_SET_STRING = 1;
const FSCONFIG_CMD_CREATE = 6;

/** A file system context for `fsType`: a descriptor, or -1. */
export function fsopen(fsType: string): number {
  return Number(lib().syscall(SYS_FSOPEN, Number(ptr(cstring(fsType))), FSOPEN_CLOEXEC, 0, 0, 0, 0));
}

/** Sets option `key` to `value` on a context from fsopen; 0 or -1. */
export function fsconfigString(fd: number, key: string, value: string): number {
  const keyText = cstring(key);
  const valueText = cstring(value);
  return Number(lib().syscall(SYS_FSCONFIG, fd, FSCONFIG_SET_STRING, Number(ptr(keyText)), Number(ptr(valueText)), 0, 0));
}

/** Creates the file system of a configured context and returns a detached mount of it with `attrs` (MOUNT_ATTR_*), or -1. */
export function fsmountCreate(fd: number, attrs: number): number {
  if (Number(lib().syscall(SYS_FSCONFIG, fd, FSCONFIG_CMD_CREATE, 0, 0, 0, 0)) !== 0) return -1;
  return Number(lib().syscall(SYS_FSMOUNT, fd, FSMOUNT_CLOEXEC, attrs, 0, 0, 0));
}

/** Attaches the detached mount `treeFd` at `target`; 0 or -1. */
export function moveMountTo(treeFd: number, target: string): number {
  const empty = cstring("");
  const path = cstring(target);
  return Number(lib().syscall(SYS_MOVE_MOUNT, treeFd, Number(ptr(empty)), AT_FDCWD, Number(ptr(path)), MOVE_MOUNT_F_EMPTY_PATH, 0));
}

export function pivotRoot(newRoot: string, putOld: string): number {
  return isolationLib().pivot_root(cstring(newRoot), cstring(putOld));
}

export function chroot(path: string): number {
  return isolationLib().chroot(cstring(path));
}

export function chdir(path: string): number {
  return isolationLib().chdir(cstring(path));
}

export function sethostname(name: string): number {
  const bytes = Buffer.from(name);
  return isolationLib().sethostname(bytes, bytes.length);
}

/** Drops every supplementary group (setgroups(0, NULL)). */
export function clearSupplementaryGroups(): number {
  return isolationLib().setgroups(0, null);
}

export function setresuid(uid: number): number {
  return isolationLib().setresuid(uid, uid, uid);
}

export function setresgid(gid: number): number {
  return isolationLib().setresgid(gid, gid, gid);
}

// prctl(2) options for capabilities and privileges.
export const PR_CAPBSET_DROP = 24;
export const PR_SET_NO_NEW_PRIVS = 38;
export const PR_CAP_AMBIENT = 47;
export const PR_CAP_AMBIENT_CLEAR_ALL = 4;

/** capset(2) on the calling thread; each set is a 64-bit mask of capability numbers. */
export function capset(effective: bigint, permitted: bigint, inheritable: bigint): number {
  const LINUX_CAPABILITY_VERSION_3 = 0x20080522;
  const header = new Uint32Array([LINUX_CAPABILITY_VERSION_3, 0]);
  // Two struct __user_cap_data_struct { u32 effective, permitted, inheritable; }: low words, then high.
  const low = (mask: bigint) => Number(mask & 0xffffffffn);
  const high = (mask: bigint) => Number(mask >> 32n);
  const data = new Uint32Array([
    low(effective), low(permitted), low(inheritable),
    high(effective), high(permitted), high(inheritable),
  ]);
  return isolationLib().capset(header, data);
}

/** RLIM_INFINITY: no limit. */
export const RLIM_INFINITY = 0xffffffffffffffffn;

export function setrlimit(resource: number, soft: bigint, hard: bigint): number {
  return isolationLib().setrlimit(resource, new BigUint64Array([soft, hard]));
}

/**
 * The largest uid or gid a process may hold: uid_t is 32 bits, and its
 * all-ones value is no id but setresuid's "leave unchanged".
 */
export const MAX_ID = 0xfffffffe;

/** A user's uid and primary gid from the system user database (NSS), or null. */
export function lookupUser(name: string): { uid: number; gid: number } | null {
  const numeric = /^\d+$/.test(name);
  // getpwuid's u32 would wrap a job's "4294967296" to root on Bun, and Deno's FFI throws on it.
  if (numeric && Number(name) > MAX_ID) return null;
  const entry = numeric ? isolationLib().getpwuid(Number(name)) : isolationLib().getpwnam(cstring(name));
  if (!entry) return null;
  // struct passwd on LP64: two pointers, then uid_t pw_uid at 16 and gid_t pw_gid at 20.
  return { uid: read.u32(entry, 16), gid: read.u32(entry, 20) };
}

/**
 * Gives the calling thread the signal state a fresh program expects: nothing
 * blocked, and every signal in `ignored` (a SigIgn mask) back to its default,
 * since an ignored disposition survives execve.
 */
export function resetSignals(ignored: bigint): void {
  const SIG_SETMASK = 2;
  const SIG_DFL = 0;
  isolationLib().sigprocmask(SIG_SETMASK, new BigUint64Array(16), null);
  for (let signal = 1; signal <= 64; signal++) {
    if (ignored & (1n << BigInt(signal - 1))) isolationLib().signal(signal, SIG_DFL);
  }
}

export function socket(domain: number, type: number, protocol: number): number {
  return isolationLib().socket(domain, type, protocol);
}

export function close(fd: number): number {
  return isolationLib().close(fd);
}

/** Marks every descriptor from `first` up close-on-exec (close_range, Linux 5.11+). */
export function cloexecFrom(first: number): number {
  return Number(lib().syscall(SYS_CLOSE_RANGE, first, 0xffffffff, CLOSE_RANGE_CLOEXEC, 0, 0, 0));
}

/** execve(2): returns only on failure (-1, errno set). */
export function execve(path: string, argv: readonly string[], env: readonly string[]): number {
  const strings = [...argv, ...env].map(cstring);
  const pointers = (from: number, count: number) => {
    const array = new BigUint64Array(count + 1);
    for (let i = 0; i < count; i++) array[i] = BigInt(ptr(strings[from + i]!));
    return array;
  };
  const argvArray = pointers(0, argv.length);
  const envArray = pointers(argv.length, env.length);
  const result = isolationLib().execve(cstring(path), argvArray, envArray);
  // Keeps the strings alive (and referenced) across the call.
  strings.length = 0;
  return result;
}

// prctl(2) options for the syscall filter (linux/seccomp.h).
const PR_SET_SECCOMP = 22;
const SECCOMP_MODE_FILTER = 2;

/**
 * Installs a seccomp filter (`struct sock_filter[]`, as bpf.ts encodes it) on
 * the calling thread; needs no_new_privs or CAP_SYS_ADMIN. Returns 0 or -1.
 */
export function installSeccompFilter(program: Uint8Array): number {
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; }: the pointer sits at offset 8.
  const fprog = new DataView(new ArrayBuffer(16));
  fprog.setUint16(0, program.length / 8, true);
  fprog.setBigUint64(8, BigInt(ptr(program)), true);
  const result = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, Number(ptr(fprog)));
  // Keeps the program referenced until the kernel has copied it.
  program.at(0);
  return result;
}

// bpf(2), for a cgroup v2 device allow-list (cgroups/device-filter.ts).
const BPF_PROG_LOAD = 5;
const BPF_PROG_ATTACH = 8;
const BPF_PROG_TYPE_CGROUP_DEVICE = 15;
const BPF_CGROUP_DEVICE = 6;
/** Other programs on the cgroup and its ancestors (systemd's, a parent's) keep running beside this one: every one must allow. */
const BPF_F_ALLOW_MULTI = 2;
/** union bpf_attr as far as BPF_PROG_LOAD's prog_name; the kernel reads the size given and zero-fills the rest. */
const BPF_ATTR_BYTES = 64;
/** Room for the verifier's explanation when it refuses a program. */
const BPF_LOG_BYTES = 65536;
const BPF_LICENSE = new TextEncoder().encode("Apache-2.0\0");

function bpf(command: number, attr: Uint8Array): number {
  const SYS_BPF = ARM64 ? 280 : 321;
  return Number(lib().syscall(SYS_BPF, command, Number(ptr(attr)), attr.byteLength, 0, 0, 0));
}

/**
 * Loads eBPF `instructions` (8 bytes each) as a BPF_PROG_TYPE_CGROUP_DEVICE
 * program: its descriptor, or a SysError carrying the verifier's log.
 */
export function loadCgroupDeviceProgram(instructions: Uint8Array): number {
  const load = (log: Uint8Array | null) => {
    const attr = new Uint8Array(BPF_ATTR_BYTES);
    const view = new DataView(attr.buffer);
    view.setUint32(0, BPF_PROG_TYPE_CGROUP_DEVICE, true);
    view.setUint32(4, instructions.length / 8, true);
    view.setBigUint64(8, BigInt(ptr(instructions)), true);
    view.setBigUint64(16, BigInt(ptr(BPF_LICENSE)), true);
    if (log) {
      view.setUint32(24, 1, true);
      view.setUint32(28, log.length, true);
      view.setBigUint64(32, BigInt(ptr(log)), true);
    }
    return bpf(BPF_PROG_LOAD, attr);
  };
  const fd = load(null);
  if (fd >= 0) return fd;
  // Asked again with a log only to say why: a log that overflows its buffer is itself an error (ENOSPC).
  const number = errno();
  const log = new Uint8Array(BPF_LOG_BYTES);
  const retry = load(log);
  if (retry >= 0) return retry;
  const text = new TextDecoder().decode(log.subarray(0, Math.max(0, log.indexOf(0)))).trim();
  throw new SysError(ERRNO_NAMES[number] ?? `E${number}`, number, "bpf(BPF_PROG_LOAD)", text || undefined);
}

/** Attaches a loaded device program to the cgroup whose directory `cgroupFd` is open on; throws SysError. */
export function attachCgroupDeviceProgram(cgroupFd: number, programFd: number): void {
  const attr = new Uint8Array(BPF_ATTR_BYTES);
  const view = new DataView(attr.buffer);
  view.setUint32(0, cgroupFd, true);
  view.setUint32(4, programFd, true);
  view.setUint32(8, BPF_CGROUP_DEVICE, true);
  view.setUint32(12, BPF_F_ALLOW_MULTI, true);
  if (bpf(BPF_PROG_ATTACH, attr) < 0) fail("bpf(BPF_PROG_ATTACH)");
}

/** dup3(2) without flags: makes `to` a copy of `from` (closing what `to` was). Returns `to` or -1. */
export function dup2(from: number, to: number): number {
  const SYS_DUP3 = ARM64 ? 24 : 292;
  return Number(lib().syscall(SYS_DUP3, from, to, 0, 0, 0, 0));
}

/** ioctl(2) whose argument is a buffer the kernel reads and writes (struct ifreq and the like). */
export function ioctlBuffer(fd: number, request: number, arg: Uint8Array): number {
  return lib().ioctl(fd, request, ptr(arg));
}

// ---------------------------------------------------------------------------
// Netlink requests, for asking the kernel about a TCP connection's other end
// (sock-diag.ts). A table of its own, opened on first use: only the agent
// makes these calls.
// ---------------------------------------------------------------------------

const NETLINK_SYMBOLS = {
  socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  send: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i64 },
  recv: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i64 },
} as const;

const netlinkLib = lazyLibc(NETLINK_SYMBOLS);

const AF_NETLINK = 16;
const SOCK_RAW = 3;
const SOCK_CLOEXEC = 0o2000000;
export const MSG_DONTWAIT = 0x40;

/** A netlink socket of `protocol` (NETLINK_SOCK_DIAG, ...); throws SysError. */
export function netlinkSocket(protocol: number): number {
  const fd = netlinkLib().socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  return fd < 0 ? fail("socket") : fd;
}

/** Sends one whole message; throws SysError. */
export function sysSend(fd: number, message: Uint8Array): void {
  if (Number(netlinkLib().send(fd, message, message.length, 0)) < 0) fail("send");
}

/** Receives into `buffer`: the bytes read, or -1 (see errno(); EAGAIN with MSG_DONTWAIT and nothing queued). */
export function sysRecv(fd: number, buffer: Uint8Array, flags: number): number {
  return Number(netlinkLib().recv(fd, buffer, buffer.length, flags));
}

// ---------------------------------------------------------------------------
// Synchronous file calls for the per-task processes (the executor). node:fs
// costs about 0.5 MiB of private memory in each process that loads it; these
// reuse the libc this module opens anyway. A separate table, opened on first
// use. Failures throw SysError, named like Node's ("ENOENT: ..., open 'x'").
// ---------------------------------------------------------------------------

const FILE_SYMBOLS = {
  open: { args: [FFIType.ptr, FFIType.i32, FFIType.u32], returns: FFIType.i32 },
  openat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.u32], returns: FFIType.i32 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
  read: { args: [FFIType.i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
  write: { args: [FFIType.i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
  fsync: { args: [FFIType.i32], returns: FFIType.i32 },
  sync_file_range: { args: [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.u32], returns: FFIType.i32 },
  statx: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
  access: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  mkdir: { args: [FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  mkdirat: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  rmdir: { args: [FFIType.ptr], returns: FFIType.i32 },
  unlink: { args: [FFIType.ptr], returns: FFIType.i32 },
  rename: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  linkat: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  opendir: { args: [FFIType.ptr], returns: FFIType.ptr },
  readdir: { args: [FFIType.ptr], returns: FFIType.ptr },
  closedir: { args: [FFIType.ptr], returns: FFIType.i32 },
  strerror: { args: [FFIType.i32], returns: FFIType.cstring },
} as const;

const files = lazyLibc(FILE_SYMBOLS);

/** open(2) flags. x86_64 and arm64 differ in O_DIRECTORY and O_NOFOLLOW. */
const ARM64 = process.arch === "arm64";
export const O_RDONLY = 0;
export const O_WRONLY = 0o1;
export const O_RDWR = 0o2;
export const O_CREAT = 0o100;
export const O_TRUNC = 0o1000;
export const O_APPEND = 0o2000;
export const O_NONBLOCK = 0o4000;
export const O_DIRECTORY = ARM64 ? 0o40000 : 0o200000;
export const O_NOFOLLOW = ARM64 ? 0o100000 : 0o400000;
export const O_CLOEXEC = 0o2000000;
/** An unnamed file in the directory opened (open(2)'s O_TMPFILE, which includes O_DIRECTORY). */
export const O_TMPFILE = 0o20000000 | O_DIRECTORY;

/** errno names for the codes callers test; others read as "E<number>". */
const ERRNO_NAMES: Readonly<Record<number, string>> = {
  1: "EPERM", 2: "ENOENT", 3: "ESRCH", 5: "EIO", 11: "EAGAIN", 13: "EACCES", 16: "EBUSY", 17: "EEXIST",
  20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL", 30: "EROFS", 32: "EPIPE", 39: "ENOTEMPTY", 40: "ELOOP",
  95: "EOPNOTSUPP",
};

/** A failed system call: `code` is the errno name, as on Node's errors. */
export class SysError extends Error {
  override name = "SysError";
  constructor(
    readonly code: string,
    readonly errno: number,
    syscall: string,
    path?: string,
  ) {
    super(`${code}: ${files().strerror(errno) ?? "unknown error"}, ${syscall}${path === undefined ? "" : ` '${path}'`}`);
  }
}

/** The SysError of a call that failed with `number` (errno() by default). */
export function sysError(syscall: string, path?: string, number = errno()): SysError {
  return new SysError(ERRNO_NAMES[number] ?? `E${number}`, number, syscall, path);
}

function fail(syscall: string, path?: string): never {
  throw sysError(syscall, path);
}

const encoder = new TextEncoder();

export function sysOpen(path: string, flags: number, mode = 0o666): number {
  const fd = files().open(cstring(path), flags | O_CLOEXEC, mode);
  return fd < 0 ? fail("open", path) : fd;
}

/** openat(2): `name` in the directory `dirFd`; never follows anything with O_NOFOLLOW on a single component. */
export function sysOpenAt(dirFd: number, name: string, flags: number, mode = 0o666): number {
  const fd = files().openat(dirFd, cstring(name), flags | O_CLOEXEC, mode);
  return fd < 0 ? fail("openat", name) : fd;
}

export function sysClose(fd: number): void {
  if (files().close(fd) < 0) fail("close");
}

/** Reads up to buffer.length bytes; 0 at end of file. */
export function sysRead(fd: number, buffer: Uint8Array): number {
  const n = Number(files().read(fd, buffer, buffer.length));
  return n < 0 ? fail("read") : n;
}

/** Writes all of `data`. */
export function sysWrite(fd: number, data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  for (let done = 0; done < bytes.length; ) done += sysWriteSome(fd, bytes.subarray(done));
}

/** One write(2): the bytes the kernel took, which may be fewer than given (a nearly full pipe or terminal); throws SysError (EAGAIN when a non-blocking one is full). */
export function sysWriteSome(fd: number, bytes: Uint8Array): number {
  const n = Number(files().write(fd, bytes, bytes.length));
  return n < 0 ? fail("write") : n;
}

export function sysFsync(fd: number): void {
  if (files().fsync(fd) < 0) fail("fsync");
}

/** sync_file_range(2)'s flag: start writing the file's dirty pages out, without waiting for them. */
const SYNC_FILE_RANGE_WRITE = 2;

/**
 * Starts writing out what was written to `fd` and returns without waiting:
 * files started together then reach the disk together, and the fsync of
 * each waits for writes already under way. Only a hint: a file system that
 * refuses it loses nothing (the fsync writes the data itself), so its
 * failure is ignored.
 */
export function sysStartWriteback(fd: number): void {
  files().sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

// statx(2): its layout is the same on every architecture. (AT_FDCWD is declared above.)
const AT_SYMLINK_NOFOLLOW = 0x100;
const AT_EMPTY_PATH = 0x1000;
const STATX_BASIC_STATS = 0x7ff;
const STATX_ATTR_MOUNT_ROOT = 0x2000n;
const S_IFMT = 0o170000;

export interface FileStat {
  kind: "file" | "directory" | "fifo" | "symlink" | "other";
  ino: bigint;
  mode: number;
  /** The root of a mount (something is mounted here); Linux 5.8+, false before. */
  mountRoot: boolean;
}

const KINDS: Readonly<Record<number, FileStat["kind"]>> = { 0o100000: "file", 0o040000: "directory", 0o010000: "fifo", 0o120000: "symlink" };

/** stat of a path (lstat with `follow` false) or of an open descriptor. */
export function sysStat(target: string | number, follow = true): FileStat {
  const out = new DataView(new ArrayBuffer(256));
  const byFd = typeof target === "number";
  const flags = byFd ? AT_EMPTY_PATH : follow ? 0 : AT_SYMLINK_NOFOLLOW;
  const result = files().statx(byFd ? target : AT_FDCWD, cstring(byFd ? "" : target), flags, STATX_BASIC_STATS, new Uint8Array(out.buffer));
  if (result < 0) fail("statx", byFd ? undefined : target);
  const mode = out.getUint16(28, true);
  const attributes = out.getBigUint64(8, true) & out.getBigUint64(56, true);
  return { kind: KINDS[mode & S_IFMT] ?? "other", ino: out.getBigUint64(32, true), mode, mountRoot: (attributes & STATX_ATTR_MOUNT_ROOT) !== 0n };
}

export const X_OK = 1;

export function sysAccess(path: string, mode: number): boolean {
  return files().access(cstring(path), mode) === 0;
}

/** mkdir(2); an existing directory is fine. */
/** mkdir(2); an existing entry of that name is fine: true when this call made the directory, false when one was there. */
export function sysMkdirNew(path: string, mode = 0o777): boolean {
  if (files().mkdir(cstring(path), mode) === 0) return true;
  if (ERRNO_NAMES[errno()] !== "EEXIST") fail("mkdir", path);
  return false;
}

/** mkdirat(2): `name` in the directory `dirFd`; an existing entry of that name is fine (whatever it is: the caller opens it to see). */
export function sysMkdirAt(dirFd: number, name: string, mode = 0o777): void {
  if (files().mkdirat(dirFd, cstring(name), mode) < 0 && ERRNO_NAMES[errno()] !== "EEXIST") fail("mkdirat", name);
}

export function sysRmdir(path: string): void {
  if (files().rmdir(cstring(path)) < 0) fail("rmdir", path);
}

export function sysUnlink(path: string): void {
  if (files().unlink(cstring(path)) < 0) fail("unlink", path);
}

export function sysRename(from: string, to: string): void {
  if (files().rename(cstring(from), cstring(to)) < 0) fail("rename", to);
}

const AT_SYMLINK_FOLLOW = 0x400;

/**
 * Gives the unnamed file open on `fd` (O_TMPFILE) the name `to`, through
 * /proc/self/fd: linkat's AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH.
 */
export function sysLinkOpenFile(fd: number, to: string): void {
  if (files().linkat(AT_FDCWD, cstring(`/proc/self/fd/${fd}`), AT_FDCWD, cstring(to), AT_SYMLINK_FOLLOW) < 0) fail("linkat", to);
}

/** Names in a directory, without "." and "..". */
export function sysReaddir(path: string): string[] {
  const dir = files().opendir(cstring(path));
  if (!dir) fail("opendir", path);
  const names: string[] = [];
  try {
    for (let entry = files().readdir(dir); entry; entry = files().readdir(dir)) {
      // struct dirent (glibc, 64-bit): d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name.
      const name = new CString(entry, 19).toString();
      if (name !== "." && name !== "..") names.push(name);
    }
  } finally {
    files().closedir(dir);
  }
  return names;
}

/**
 * One buffer serves every readTextFile: /proc and cgroup files are a few KiB,
 * and a fresh 64 KiB buffer per read left whole allocator pages dirty in each
 * executor (measured: +1 MiB after a launch).
 */
const READ_CHUNK_BYTES = 16 * 1024;
let readBuffer: Uint8Array | undefined;

/** The whole file as UTF-8 (works for /proc and cgroup files, whose size reads as 0). */
export function readTextFile(path: string): string {
  const fd = sysOpen(path, O_RDONLY);
  try {
    readBuffer ??= new Uint8Array(READ_CHUNK_BYTES);
    let text = "";
    const decoder = new TextDecoder();
    for (let n = sysRead(fd, readBuffer); n > 0; n = sysRead(fd, readBuffer)) text += decoder.decode(readBuffer.subarray(0, n), { stream: true });
    return text + decoder.decode();
  } finally {
    files().close(fd);
  }
}

/** Writes `text` to `path` (truncating, creating with `mode` when absent). */
export function writeTextFile(path: string, text: string, mode = 0o666): void {
  const fd = sysOpen(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  try {
    sysWrite(fd, text);
  } finally {
    files().close(fd);
  }
}

// ---------------------------------------------------------------------------
// Pseudo-terminals and descriptor hand-over, for interactive `alloc exec`.
// A table of its own, opened on first use: an executor that never runs an
// interactive session never loads it. ioctl is declared again here with an
// integer third argument (TIOCGPTPEER and TIOCSCTTY take a value, not a
// pointer).
// ---------------------------------------------------------------------------

const TERMINAL_SYMBOLS = {
  ioctl: { args: [FFIType.i32, FFIType.u64, FFIType.i64], returns: FFIType.i32 },
  fchown: { args: [FFIType.i32, FFIType.u32, FFIType.u32], returns: FFIType.i32 },
  tcgetattr: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  tcsetattr: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  cfmakeraw: { args: [FFIType.ptr], returns: FFIType.void },
} as const;

const terminalLib = lazyLibc(TERMINAL_SYMBOLS);

// ioctl(2) requests of the tty layer (the same numbers on x86_64 and arm64).
const TIOCSCTTY = 0x540e;
const TIOCSWINSZ = 0x5414;
const TIOCSPTLCK = 0x40045431;
const TIOCGPTPEER = 0x5441;
const O_NOCTTY = 0o400;

/**
 * A new pseudo-terminal from the devpts instance whose `ptmx` is at
 * `ptmxPath`: [master, slave], both close-on-exec. The slave is opened from
 * the master (TIOCGPTPEER, Linux 4.13+), never by a path someone could swap.
 * Throws SysError.
 */
export function openPseudoTerminal(ptmxPath = "/dev/ptmx"): [number, number] {
  const master = sysOpen(ptmxPath, O_RDWR | O_NOCTTY);
  try {
    // unlockpt(3): a fresh slave is locked until its master says otherwise.
    if (lib().ioctl(master, TIOCSPTLCK, ptr(new Int32Array(1))) < 0) fail("ioctl TIOCSPTLCK", ptmxPath);
    const slave = terminalLib().ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) fail("ioctl TIOCGPTPEER", ptmxPath);
    return [master, slave];
  } catch (err) {
    files().close(master);
    throw err;
  }
}

/** Sets a terminal's size (TIOCSWINSZ); the kernel tells its foreground process group with SIGWINCH. */
export function setWindowSize(fd: number, rows: number, cols: number): void {
  // struct winsize { unsigned short ws_row, ws_col, ws_xpixel, ws_ypixel; }
  if (lib().ioctl(fd, TIOCSWINSZ, ptr(new Uint16Array([rows, cols, 0, 0]))) < 0) fail("ioctl TIOCSWINSZ");
}

/** Makes terminal `fd` the controlling terminal of this process's session (it must lead one). */
export function takeControllingTerminal(fd: number): number {
  return terminalLib().ioctl(fd, TIOCSCTTY, 0);
}

/**
 * Puts terminal `fd` in raw mode as cfmakeraw(3) defines it: no echo, no line
 * editing, no signals from keys, and no output processing (a "\n" is not
 * turned into "\r\n"). Returns what restores the previous mode. Throws
 * SysError when `fd` is not a terminal.
 */
export function makeRawTerminal(fd: number): () => void {
  // struct termios (glibc): four flag words, c_line, c_cc[32], two speeds: 60 bytes.
  const TERMIOS_BYTES = 64;
  const TCSANOW = 0;
  const saved = new Uint8Array(TERMIOS_BYTES);
  if (terminalLib().tcgetattr(fd, saved) < 0) fail("tcgetattr");
  const raw = saved.slice();
  terminalLib().cfmakeraw(raw);
  if (terminalLib().tcsetattr(fd, TCSANOW, raw) < 0) fail("tcsetattr");
  return () => void terminalLib().tcsetattr(fd, TCSANOW, saved);
}

/** fchown(2); returns 0 or -1 (see errno()). */
export function fchown(fd: number, uid: number, gid: number): number {
  return terminalLib().fchown(fd, uid, gid);
}

const SYS_PIDFD_OPEN = 434;
const SYS_PIDFD_GETFD = 438;

/**
 * A copy, in this process, of descriptor `fd` of process `pid` (pidfd_getfd,
 * Linux 5.6+; close-on-exec). Needs ptrace rights over `pid`: root, or the
 * same user where no Yama policy forbids it. Throws SysError.
 */
export function takeDescriptor(pid: number, fd: number): number {
  const pidfd = Number(lib().syscall(SYS_PIDFD_OPEN, pid, 0, 0, 0, 0, 0));
  if (pidfd < 0) fail("pidfd_open");
  try {
    const copy = Number(lib().syscall(SYS_PIDFD_GETFD, pidfd, fd, 0, 0, 0, 0));
    if (copy < 0) fail("pidfd_getfd");
    return copy;
  } finally {
    files().close(pidfd);
  }
}

const SYS_PIDFD_SEND_SIGNAL = 424;

/**
 * A pidfd for `pid` (Linux 5.3+): it names that one process for good, child or
 * not, and polls readable once the process has exited. -1 and errno on failure.
 */
export function pidfdOpen(pid: number): number {
  return Number(lib().syscall(SYS_PIDFD_OPEN, pid, 0, 0, 0, 0, 0));
}

/** Sends `signal` to the process a pidfd names (never to a later process with its pid); 0, or -1 and errno. */
export function pidfdSendSignal(pidfd: number, signal: number): number {
  return Number(lib().syscall(SYS_PIDFD_SEND_SIGNAL, pidfd, signal, 0, 0, 0, 0));
}

/** Whether the process a pidfd names has exited (poll without waiting). */
export function pidfdExited(pidfd: number): boolean {
  const fds = new Int32Array([pidfd, POLLIN]);
  return poll(fds, 1, 0) > 0;
}

// ---------------------------------------------------------------------------
// Who is at the other end of a unix socket (SO_PEERCRED), through the
// syscall stub every role already has, so an executor pays no new FFI stub.

const SYS_GETSOCKOPT = ARM64 ? 209 : 55;
const SOL_SOCKET = 1;
const SO_PEERCRED = 17;

export interface PeerCredentials {
  pid: number;
  uid: number;
  gid: number;
}

/** The credentials the kernel recorded for the peer of unix socket `fd` when it connected, or null. */
export function peerCredentials(fd: number): PeerCredentials | null {
  // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
  const ucred = new Int32Array(3);
  const length = new Uint32Array([ucred.byteLength]);
  const result = Number(lib().syscall(SYS_GETSOCKOPT, fd, SOL_SOCKET, SO_PEERCRED, Number(ptr(ucred)), Number(ptr(length)), 0));
  if (result < 0 || length[0] !== ucred.byteLength) return null;
  return { pid: ucred[0]!, uid: ucred[1]! >>> 0, gid: ucred[2]! >>> 0 };
}

// ---------------------------------------------------------------------------
// Image layers in overlayfs' own format: a deleted path is a 0/0 character
// device, a replaced directory carries the opaque xattr. A table of its own,
// loaded only by the agent when it unpacks a layer.

const LAYER_SYMBOLS = {
  mknod: { args: [FFIType.ptr, FFIType.u32, FFIType.u64], returns: FFIType.i32 },
  lsetxattr: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
} as const;
const layerLib = lazyLibc(LAYER_SYMBOLS);

const S_IFCHR = 0o020000;

/** Makes `path` an overlayfs whiteout (a 0/0 character device); throws SysError. */
export function makeWhiteout(path: string): void {
  if (layerLib().mknod(cstring(path), S_IFCHR, 0) !== 0) fail("mknod", path);
}

/** Sets xattr `name` to `value` on `path` itself (not a symlink's target); throws SysError. */
export function setXattr(path: string, name: string, value: string): void {
  const data = Buffer.from(value);
  if (layerLib().lsetxattr(cstring(path), cstring(name), data, data.byteLength, 0) !== 0) fail("lsetxattr", path);
}
