/**
 * Names in the run directory (layout in files.ts), made by the agent side.
 * Kept apart from files.ts so the executor process never loads crypto.
 *
 *   <run dir>/ex-<rand>.sock, .log             an executor (shared by several tasks)
 *   <run dir>/<alloc8>.<key>.<rand>.exit.json  one task's files, named by its task key
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { MAX_SOCKET_PATH_BYTES } from "../runtime/unix.ts";
import { executorFiles, type ExecutorFiles } from "./files.ts";

/** The name prefix every run of this task carries in the run directory. */
export function executorPrefix(allocId: string, taskName: string): string {
  const key = createHash("sha256").update(`${allocId}/${taskName}`).digest("hex").slice(0, 12);
  return `${allocId.replace(/[^A-Za-z0-9-]/g, "").slice(0, 8)}.${key}.`;
}

/** A fresh key for one run of a task inside an executor: its files' base name. */
export function taskKey(allocId: string, taskName: string): string {
  return `${executorPrefix(allocId, taskName)}${randomBytes(4).toString("hex")}`;
}

/** A fresh name for an executor that is not tied to one task. */
export function executorName(): string {
  return `ex-${randomBytes(4).toString("hex")}`;
}

/** Files for a new executor called `name`; throws when its socket path would be too long. */
export function newExecutorFiles(runDir: string, name: string = executorName()): ExecutorFiles {
  const files = executorFiles(join(runDir, name));
  const length = Buffer.byteLength(files.socket);
  if (length > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `executor socket ${files.socket} is ${length} bytes, over the ${MAX_SOCKET_PATH_BYTES}-byte limit of unix socket paths: use a shorter run directory than ${runDir}`,
    );
  }
  return files;
}
