/**
 * Where a task's logs live in the alloc dir, in Nomad's naming:
 *
 *   alloc/logs/.<task>.stdout.fifo   the task writes here (its executor opens it)
 *   alloc/logs/.<task>.stderr.fifo
 *   alloc/logs/.<task>.stdout.fifo.stage   the logmon's bytes between the FIFO and
 *   alloc/logs/.<task>.stderr.fifo.stage   the file (log-stream.ts says why)
 *   alloc/logs/<task>.stdout.N       rotated files; the highest N is the live one
 *   alloc/logs/<task>.stderr.N
 *
 * The logmon writes these names, the fs endpoint reads them and the task
 * runner creates the FIFOs: all three take them from here.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

export const LOG_TYPES = ["stdout", "stderr"] as const;
export type LogType = (typeof LOG_TYPES)[number];

/** Path of the alloc's log dir relative to the alloc dir (the `File` of a stream frame starts with it). */
export const ALLOC_LOG_DIR = "alloc/logs";

export function fifoPath(logDir: string, taskName: string, type: LogType): string {
  return join(logDir, `.${taskName}.${type}.fifo`);
}

/** The staging FIFO beside a task's log FIFO: the logmon moves bytes through it, the executor holds a spare end. */
export function stageFifoPath(fifo: string): string {
  return `${fifo}.stage`;
}

export function logFileName(taskName: string, type: LogType, index: number): string {
  return `${taskName}.${type}.${index}`;
}

/** The indexes of `<task>.<type>.N` in `logDir`, ascending; empty when the dir is missing. */
export function logFileIndexes(logDir: string, taskName: string, type: LogType): number[] {
  return logFileIndexesIn(listLogDir(logDir), taskName, type);
}

/** The names in `logDir`; none when the dir is missing. One listing serves both of a task's streams. */
export function listLogDir(logDir: string): string[] {
  try {
    return readdirSync(logDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

/** The indexes of `<task>.<type>.N` among `names` (a listing of the log dir), ascending. */
export function logFileIndexesIn(names: readonly string[], taskName: string, type: LogType): number[] {
  const prefix = `${taskName}.${type}.`;
  const indexes: number[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const suffix = name.slice(prefix.length);
    if (/^\d{1,15}$/.test(suffix)) indexes.push(Number(suffix));
  }
  return indexes.sort((a, b) => a - b);
}

/** A task name that is safe as a file name component (Nomad's task names are free text otherwise). */
export function isSafeTaskName(name: string): boolean {
  return name.length > 0 && name.length <= 200 && name !== "." && name !== ".." && !/[/\0]/.test(name);
}
