/**
 * The few libc calls JavaScript runtimes do not offer (prctl, fcntl on pipes,
 * poll, pidfds, waitid), through bun:ffi. libc is opened on first use, so a
 * process that never calls these pays nothing.
 *
 * Each wrapper returns the raw result; `-1` means failure and `errno()` says
 * why, as in C.
 */
import { CString, dlopen, FFIType, ptr, read, type Pointer } from "bun:ffi";

const SYMBOLS = {
  prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
  // fcntl and ioctl are variadic; the third argument is passed as a 64-bit word either way.
  fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.i32 },
  ioctl: { args: [FFIType.i32, FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  poll: { args: [FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
  // syscall must be declared with all seven words or the trailing ones are garbage.
  syscall: {
    args: [FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64],
    returns: FFIType.i64,
  },
  waitid: { args: [FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  kill: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  getpgid: { args: [FFIType.i32], returns: FFIType.i32 },
  setsid: { args: [], returns: FFIType.i32 },
  __errno_location: { args: [], returns: FFIType.ptr },
} as const;

type Libc = ReturnType<typeof dlopen<typeof SYMBOLS>>["symbols"];
let libc: Libc | undefined;

function lib(): Libc {
  libc ??= dlopen("libc.so.6", SYMBOLS).symbols;
  return libc;
}

/** errno of the last failed call on this thread. */
export function errno(): number {
  return read.i32(lib().__errno_location() as Pointer, 0);
}

// prctl(2) options.
export const PR_SET_PDEATHSIG = 1;
export const PR_SET_NAME = 15;
export const PR_SET_CHILD_SUBREAPER = 36;

export function prctl(option: number, arg2 = 0, arg3 = 0, arg4 = 0, arg5 = 0): number {
  return lib().prctl(option, arg2, arg3, arg4, arg5);
}

// fcntl(2) commands for pipes.
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

export const POLLIN = 0x1;
export const POLLHUP = 0x10;

/**
 * poll(2) over `fds`; blocks the calling thread up to `timeoutMs`. Returns the
 * revents of each fd in order (0 when nothing happened), or null on failure.
 */
export function poll(fds: readonly number[], events: number, timeoutMs: number): Int16Array | null {
  // struct pollfd { int fd; short events; short revents; }
  const buffer = new Int32Array(fds.length * 2);
  const view = new Int16Array(buffer.buffer);
  fds.forEach((fd, i) => {
    buffer[i * 2] = fd;
    view[i * 4 + 2] = events;
  });
  const result = lib().poll(ptr(buffer), fds.length, timeoutMs);
  if (result < 0) return null;
  return Int16Array.from(fds, (_, i) => view[i * 4 + 3]!);
}

// Linux x86_64 and arm64 share these numbers (asm-generic).
const SYS_PIDFD_OPEN = 434;
const SYS_PIDFD_SEND_SIGNAL = 424;

/** A file descriptor that refers to process `pid` for good (no reuse race), or -1. */
export function pidfdOpen(pid: number): number {
  return Number(lib().syscall(SYS_PIDFD_OPEN, pid, 0, 0, 0, 0, 0));
}

export function pidfdSendSignal(pidfd: number, signal: number): number {
  return Number(lib().syscall(SYS_PIDFD_SEND_SIGNAL, pidfd, signal, 0, 0, 0, 0));
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

/** kill(2): a negative `pid` signals a process group. */
export function kill(pid: number, signal: number): number {
  return lib().kill(pid, signal);
}

export function getpgid(pid: number): number {
  return lib().getpgid(pid);
}

export function setsid(): number {
  return lib().setsid();
}

// mount(2) / umount2(2), for the secrets tmpfs of a task dir.
const MOUNT_SYMBOLS = {
  mount: { args: [FFIType.cstring, FFIType.cstring, FFIType.cstring, FFIType.u64, FFIType.cstring], returns: FFIType.i32 },
  umount2: { args: [FFIType.cstring, FFIType.i32], returns: FFIType.i32 },
} as const;
let mountLib: ReturnType<typeof dlopen<typeof MOUNT_SYMBOLS>>["symbols"] | undefined;

export const MS_NOSUID = 0x2;
export const MS_NODEV = 0x4;
export const MS_NOEXEC = 0x8;
export const MNT_DETACH = 0x2;

function cstring(text: string): Buffer {
  return Buffer.from(`${text}\0`);
}

/** mount(2); returns 0 or -1 (see errno()). */
export function mount(source: string, target: string, fsType: string, flags: number, data: string): number {
  mountLib ??= dlopen("libc.so.6", MOUNT_SYMBOLS).symbols;
  return mountLib.mount(ptr(cstring(source)), ptr(cstring(target)), ptr(cstring(fsType)), flags, ptr(cstring(data)));
}

/** umount2(2); returns 0 or -1 (see errno()). */
export function umount2(target: string, flags: number): number {
  mountLib ??= dlopen("libc.so.6", MOUNT_SYMBOLS).symbols;
  return mountLib.umount2(ptr(cstring(target)), flags);
}

// ---------------------------------------------------------------------------
// Synchronous file calls for the per-task processes (the executor). node:fs
// costs about 0.5 MiB of private memory in each process that loads it; these
// reuse the libc this module opens anyway. A separate table, opened on first
// use. Failures throw SysError, named like Node's ("ENOENT: ..., open 'x'").
// ---------------------------------------------------------------------------

const FILE_SYMBOLS = {
  open: { args: [FFIType.ptr, FFIType.i32, FFIType.u32], returns: FFIType.i32 },
  close: { args: [FFIType.i32], returns: FFIType.i32 },
  read: { args: [FFIType.i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
  write: { args: [FFIType.i32, FFIType.ptr, FFIType.u64], returns: FFIType.i64 },
  fsync: { args: [FFIType.i32], returns: FFIType.i32 },
  statx: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
  access: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  mkdir: { args: [FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  rmdir: { args: [FFIType.ptr], returns: FFIType.i32 },
  unlink: { args: [FFIType.ptr], returns: FFIType.i32 },
  rename: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  opendir: { args: [FFIType.ptr], returns: FFIType.ptr },
  readdir: { args: [FFIType.ptr], returns: FFIType.ptr },
  closedir: { args: [FFIType.ptr], returns: FFIType.i32 },
  strerror: { args: [FFIType.i32], returns: FFIType.cstring },
} as const;

type FileLibc = ReturnType<typeof dlopen<typeof FILE_SYMBOLS>>["symbols"];
let fileLibc: FileLibc | undefined;

function files(): FileLibc {
  fileLibc ??= dlopen("libc.so.6", FILE_SYMBOLS).symbols;
  return fileLibc;
}

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

/** errno names for the codes callers test; others read as "E<number>". */
const ERRNO_NAMES: Readonly<Record<number, string>> = {
  1: "EPERM", 2: "ENOENT", 3: "ESRCH", 11: "EAGAIN", 13: "EACCES", 16: "EBUSY", 17: "EEXIST",
  20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL", 39: "ENOTEMPTY", 40: "ELOOP",
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

function fail(syscall: string, path?: string): never {
  const number = errno();
  throw new SysError(ERRNO_NAMES[number] ?? `E${number}`, number, syscall, path);
}

const encoder = new TextEncoder();

export function sysOpen(path: string, flags: number, mode = 0o666): number {
  const fd = files().open(cstring(path), flags | O_CLOEXEC, mode);
  return fd < 0 ? fail("open", path) : fd;
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
  for (let done = 0; done < bytes.length; ) {
    const n = Number(files().write(fd, bytes.subarray(done), bytes.length - done));
    if (n < 0) fail("write");
    done += n;
  }
}

export function sysFsync(fd: number): void {
  if (files().fsync(fd) < 0) fail("fsync");
}

// statx(2): its layout is the same on every architecture.
const AT_FDCWD = -100;
const AT_SYMLINK_NOFOLLOW = 0x100;
const AT_EMPTY_PATH = 0x1000;
const STATX_BASIC_STATS = 0x7ff;
const S_IFMT = 0o170000;

export interface FileStat {
  kind: "file" | "directory" | "fifo" | "symlink" | "other";
  ino: bigint;
  mode: number;
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
  return { kind: KINDS[mode & S_IFMT] ?? "other", ino: out.getBigUint64(32, true), mode };
}

export const X_OK = 1;

export function sysAccess(path: string, mode: number): boolean {
  return files().access(cstring(path), mode) === 0;
}

/** mkdir(2); an existing directory is fine. */
export function sysMkdir(path: string, mode = 0o777): void {
  if (files().mkdir(cstring(path), mode) < 0 && ERRNO_NAMES[errno()] !== "EEXIST") fail("mkdir", path);
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
