/**
 * File operations that must not leave a half-written file behind. Built on
 * the libc calls of runtime/libc.ts rather than node:fs, because the
 * per-task executor uses this too and node:fs costs it ~0.5 MiB.
 */
import { O_CREAT, O_DIRECTORY, O_RDONLY, O_TMPFILE, O_TRUNC, O_WRONLY, SysError, sysClose, sysFsync, sysLinkOpenFile, sysOpen, sysRename, sysStartWriteback, sysUnlink, sysWrite } from "./libc.ts";

/**
 * Writes `data` to `path` so that a crash at any moment leaves either the old
 * file or the complete new one: write an unnamed file in the target's
 * directory, fsync it, name it, rename it over the target, fsync the
 * directory. A process killed on the way leaves no temporary file (only in
 * the instant between naming and renaming it).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): void {
  throwFirst(writeFiles([{ path, data, mode }], true));
}

/**
 * Writes `data` to `path` so that a reader sees the old file or the whole new
 * one (a temporary file renamed over it), without fsync: for a file whose use
 * ends with processes a crash of the host ends too (a task's isolation spec),
 * where the two fsyncs would only delay a task's start.
 */
export function writeFileReplacing(path: string, data: string | Uint8Array, mode = 0o644): void {
  throwFirst(writeFiles([{ path, data, mode }], false));
}

export interface FileWrite {
  path: string;
  data: string | Uint8Array;
  mode?: number;
}

/**
 * Several files, each written as writeFileAtomic writes one, in phases over
 * all of them: write each, start the writeback of each, fsync each, name
 * each, then fsync each directory once. A journalling file system commits the files synced together in one
 * go, so a batch costs about what one file costs, where one file after
 * another waits for a commit each (an executor ending 64 tasks at once).
 * The paths must differ. Answers each file's error, or null for a file
 * that is durable; one that fails leaves its old file and no temporary one.
 */
export function writeFilesAtomic(writes: readonly FileWrite[]): (Error | null)[] {
  return writeFiles(writes, true);
}

function throwFirst(errors: (Error | null)[]): void {
  const error = errors.find((err) => err !== null);
  if (error) throw error;
}

/** One file on its way: its descriptor until it is named, then its error if any. */
interface Pending {
  write: FileWrite;
  temp: string;
  fd: number | null;
  unnamed: boolean;
  error: Error | null;
}

function writeFiles(writes: readonly FileWrite[], durable: boolean): (Error | null)[] {
  const files: Pending[] = writes.map((write) => ({ write, temp: `${write.path}.tmp-${process.pid}`, fd: null, unnamed: false, error: null }));
  const step = (file: Pending, action: (fd: number) => void) => {
    if (file.error || file.fd === null) return;
    try {
      action(file.fd);
    } catch (err) {
      fail(file, err as Error);
    }
  };
  for (const file of files) {
    try {
      // Unnamed until it is whole, so a process killed while it writes or syncs leaves nothing behind;
      // a name only for the rename. A file system without O_TMPFILE gets the named temporary file.
      const mode = file.write.mode ?? 0o644;
      const unnamed = openUnnamed(parentOf(file.write.path), mode);
      file.unnamed = unnamed !== null;
      file.fd = unnamed ?? sysOpen(file.temp, O_WRONLY | O_CREAT | O_TRUNC, mode);
    } catch (err) {
      file.error = err as Error;
      continue;
    }
    step(file, (fd) => sysWrite(fd, file.write.data));
  }
  if (durable) {
    for (const file of files) step(file, sysStartWriteback);
    for (const file of files) step(file, sysFsync);
  }
  for (const file of files) {
    step(file, (fd) => {
      if (file.unnamed) linkReplacingStale(fd, file.temp);
      file.fd = null;
      sysClose(fd);
      sysRename(file.temp, file.write.path);
    });
  }
  if (durable) syncDirectories(files);
  return files.map((file) => file.error);
}

/** A full disk: the old file stays, and no half-written temporary beside it. */
function fail(file: Pending, err: Error): void {
  file.error = err;
  if (file.fd !== null) sysClose(file.fd);
  file.fd = null;
  try {
    sysUnlink(file.temp);
  } catch {
    // Already gone, or never named.
  }
}

/** Each directory a file was renamed into, synced once: the new names are durable. */
function syncDirectories(files: Pending[]): void {
  const byDir = new Map<string, Pending[]>();
  for (const file of files) {
    if (file.error) continue;
    const dir = parentOf(file.write.path);
    const named = byDir.get(dir);
    if (named) named.push(file);
    else byDir.set(dir, [file]);
  }
  for (const [path, named] of byDir) {
    try {
      const dir = sysOpen(path, O_RDONLY | O_DIRECTORY);
      try {
        sysFsync(dir);
      } finally {
        sysClose(dir);
      }
    } catch (err) {
      for (const file of named) file.error = err as Error;
    }
  }
}

function parentOf(path: string): string {
  return path.slice(0, Math.max(path.lastIndexOf("/"), 1));
}

/** Kernels and file systems without O_TMPFILE answer one of these. */
const NO_TMPFILE = new Set(["EOPNOTSUPP", "EISDIR", "EINVAL"]);

function openUnnamed(dir: string, mode: number): number | null {
  try {
    return sysOpen(dir, O_TMPFILE | O_WRONLY, mode);
  } catch (err) {
    if (err instanceof SysError && NO_TMPFILE.has(err.code)) return null;
    throw err;
  }
}

/** A temporary name left by an earlier process of the same pid (killed between link and rename) is taken over. */
function linkReplacingStale(fd: number, temp: string): void {
  try {
    sysLinkOpenFile(fd, temp);
  } catch (err) {
    if (!(err instanceof SysError && err.code === "EEXIST")) throw err;
    sysUnlink(temp);
    sysLinkOpenFile(fd, temp);
  }
}
