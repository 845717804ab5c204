/**
 * Reading and writing cgroup interface files. A cgroup file either exists with
 * a value or does not exist on this kernel or version; callers tell "not
 * measured" (undefined) from zero. Built on libc calls, not node:fs: the
 * per-task executor reads these and node:fs would cost it ~0.5 MiB.
 */
import { readTextFile, SysError, sysMkdirNew, sysRmdir, writeTextFile } from "../runtime/libc.ts";

export function readText(dir: string, name: string): string | undefined {
  try {
    return readTextFile(`${dir}/${name}`);
  } catch {
    return undefined;
  }
}

/** A file holding one integer ("4096\n"), or undefined when absent or "max". */
export function readInteger(dir: string, name: string): number | undefined {
  const text = readText(dir, name)?.trim();
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}

/** A flat keyed file ("rss 4096\ncache 0\n", memory.stat, cpu.stat) as name -> number. */
export function readKeyed(dir: string, name: string): Map<string, number> | undefined {
  const text = readText(dir, name);
  if (text === undefined) return undefined;
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) out.set(key, Number(value));
  }
  return out;
}

/** The pids listed in a cgroup.procs file (empty when the cgroup is gone). */
export function readProcs(dir: string): number[] {
  const text = readText(dir, "cgroup.procs");
  if (!text) return [];
  return text.split("\n").filter(Boolean).map(Number);
}

/** Writes an interface file; throws with the file's path in the message. */
export function writeValue(dir: string, name: string, value: string | number): void {
  const path = `${dir}/${name}`;
  try {
    writeTextFile(path, String(value));
  } catch (err) {
    throw new Error(`write ${value} to ${path}: ${(err as Error).message}`);
  }
}

/** Writes an interface file the kernel may not offer (memory.memsw, memory.swap.max); false when it failed. */
export function writeOptional(dir: string, name: string, value: string | number): boolean {
  try {
    writeTextFile(`${dir}/${name}`, String(value));
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates `dir` and any missing parents; true when `dir` itself was made
 * here (a new cgroup, whose interface files hold the kernel's defaults),
 * false when it was there already. The leaf first: its parent (the cgroup
 * parent) is there for every task but the first, so a task's directories
 * cost one call each rather than one per path component.
 */
export function makeDirs(dir: string): boolean {
  try {
    return sysMkdirNew(dir);
  } catch (err) {
    const parent = parentDir(dir);
    if (!(err instanceof SysError && err.code === "ENOENT") || parent === dir) throw err;
    makeDirs(parent);
    return sysMkdirNew(dir);
  }
}

/**
 * `dir` and its ancestors, the hierarchy's root first: the walk up stops at
 * the first directory whose parent has no interface file `file` (the mount).
 */
export function ancestorsFromRoot(dir: string, file: string): string[] {
  const chain: string[] = [];
  for (let at = dir; ; at = parentDir(at)) {
    chain.unshift(at);
    const up = parentDir(at);
    if (up === at || readText(up, file) === undefined) return chain;
  }
}

/** The directory above `path` ("/a/b" -> "/a"). */
export function parentDir(path: string): string {
  return path.slice(0, Math.max(path.lastIndexOf("/"), 1));
}

/** Removes an empty cgroup directory; one already gone is fine. */
export function removeDir(dir: string): void {
  try {
    sysRmdir(dir);
  } catch (err) {
    if (!(err instanceof SysError && err.code === "ENOENT")) throw new Error(`remove cgroup ${dir}: ${(err as Error).message}`);
  }
}
