/**
 * An executor's files and its tasks', all beside each other in the run directory:
 *
 *   <run dir>/ex-<rand>.sock                    the executor's socket (the agent's line to it)
 *   <run dir>/ex-<rand>.log                     its own stdout/stderr (never a pipe to the agent)
 *   <run dir>/<alloc8>.<key>.<rand>.exit.json   a task's exit result, durable before any waiter hears it
 *   <run dir>/<alloc8>.<key>.<rand>.spec.json   a task's isolation spec handed to `drover nsenter`
 *
 * A task's files are named by its task key (naming.ts): <key> is derived
 * from the alloc id and task name, and <rand> keeps two runs of one task
 * apart. The same shape serves both: an executor's own base gives its socket
 * and log, a task's base its exit and spec files. A unix socket path holds at
 * most 107 bytes, so the run directory must be short.
 */
import * as v from "valibot";
import { writeFileAtomic, writeFilesAtomic } from "../runtime/fs.ts";
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
  writeFileAtomic(path, exitResultText(result));
}

function exitResultText(result: ExitResult): string {
  return `${JSON.stringify(result)}\n`;
}

/**
 * The exit results of an executor's tasks, written as writeExitResult writes
 * one, those of tasks that end together in one batch (writeFilesAtomic): an
 * executor ends up to 64 tasks on its one thread, and one fsync after another
 * each waited for its own journal commit, several seconds for a job's stop.
 * A result is queued until the next turn of the event loop, so every task
 * whose end was seen in this turn joins the batch.
 */
export class ExitResultWriter {
  private queue: { path: string; result: ExitResult; done: (err: Error | null) => void }[] = [];

  /** Settles once the result is durable, or fails with why it is not. */
  write(path: string, result: ExitResult): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ path, result, done: (err) => (err ? reject(err) : resolve()) });
      if (this.queue.length === 1) setTimeout(() => this.flush(), 0);
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    let errors: (Error | null)[];
    try {
      errors = writeFilesAtomic(batch.map(({ path, result }) => ({ path, data: exitResultText(result) })));
    } catch (err) {
      // Each file's own failure is answered in `errors`; anything else still answers every waiter.
      errors = batch.map(() => err as Error);
    }
    batch.forEach((entry, i) => entry.done(errors[i] ?? null));
  }
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
