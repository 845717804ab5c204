/**
 * An executor's files, all beside each other in the run directory:
 *
 *   <run dir>/<alloc8>.<key>.<rand>.sock       its socket (the agent's line to it)
 *   <run dir>/<alloc8>.<key>.<rand>.exit.json  the task's exit result, durable before any waiter hears it
 *   <run dir>/<alloc8>.<key>.<rand>.log        its own stdout/stderr (never a pipe to the agent)
 *   <run dir>/<alloc8>.<key>.<rand>.spec.json  the isolation spec handed to `drover nsenter`
 *
 * <key> is derived from the alloc id and task name, so an agent that died
 * before it persisted a handle finds a task's executors by prefix; <rand>
 * keeps two executors of one task apart (naming.ts makes the names). A unix
 * socket path holds at most 107 bytes, so the run directory must be short.
 */
import * as v from "valibot";
import { writeFileAtomic } from "../runtime/fs.ts";
import { readTextFile, SysError, sysUnlink } from "../runtime/libc.ts";
import { ExitResultSchema, type ExitResult } from "../structs/exit-result.ts";


export interface ExecutorFiles {
  base: string;
  socket: string;
  exitFile: string;
  log: string;
  spec: string;
}

export function executorFiles(base: string): ExecutorFiles {
  return { base, socket: `${base}.sock`, exitFile: `${base}.exit.json`, log: `${base}.log`, spec: `${base}.spec.json` };
}

/** Writes the exit result so that a crash at any moment leaves none or all of it. */
export function writeExitResult(path: string, result: ExitResult): void {
  writeFileAtomic(path, `${JSON.stringify(result)}\n`);
}

/** The stored exit result, or null when there is none (the task has not ended, or nothing was saved). */
export function readExitResult(path: string): ExitResult | null {
  let text: string;
  try {
    text = readTextFile(path);
  } catch (err) {
    if (err instanceof SysError && err.code === "ENOENT") return null;
    throw new Error(`exit result ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`exit result ${path} is not JSON: ${(err as Error).message}`);
  }
  const parsed = v.safeParse(ExitResultSchema, json);
  if (!parsed.success) throw new Error(`exit result ${path} is malformed: ${v.summarize(parsed.issues)}`);
  return parsed.output;
}

/** Removes a file; one already gone is fine. */
export function removeFile(path: string): void {
  try {
    sysUnlink(path);
  } catch (err) {
    if (!(err instanceof SysError && err.code === "ENOENT")) throw err;
  }
}
