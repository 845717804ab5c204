/**
 * Names for a new executor's files (layout in files.ts), made by the agent
 * side. Kept apart from files.ts so the executor process never loads crypto.
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { MAX_SOCKET_PATH_BYTES } from "../runtime/unix.ts";
import { executorFiles, type ExecutorFiles } from "./files.ts";

/** The name prefix every executor of this task carries in the run directory. */
export function executorPrefix(allocId: string, taskName: string): string {
  const key = createHash("sha256").update(`${allocId}/${taskName}`).digest("hex").slice(0, 12);
  return `${allocId.replace(/[^A-Za-z0-9-]/g, "").slice(0, 8)}.${key}.`;
}

/** Files for a new executor of this task; throws when the socket path would be too long. */
export function newExecutorFiles(runDir: string, allocId: string, taskName: string): ExecutorFiles {
  const files = executorFiles(join(runDir, `${executorPrefix(allocId, taskName)}${randomBytes(4).toString("hex")}`));
  const length = Buffer.byteLength(files.socket);
  if (length > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `executor socket ${files.socket} is ${length} bytes, over the ${MAX_SOCKET_PATH_BYTES}-byte limit of unix socket paths: use a shorter run directory than ${runDir}`,
    );
  }
  return files;
}
