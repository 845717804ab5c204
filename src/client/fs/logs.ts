/**
 * The log streaming core of GET /v1/client/fs/logs/:alloc_id: a task's
 * stdout or stderr read across its rotated files, in Nomad's semantics
 * (file-cursor.ts), starting at the request's offset from its origin
 * (log-position.ts), ending with the task when following.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { ALLOC_LOG_DIR, logFileIndexes, logFileName, type LogType } from "../../log-layout/layout.ts";
import { FRAME_BYTES, streamSeries, type FileSeries } from "./file-cursor.ts";
import { findLogPosition, type Origin } from "./log-position.ts";

export interface LogsRequest {
  /** The alloc's log dir (alloc/logs), absolute. */
  logDir: string;
  task: string;
  type: LogType;
  origin: Origin;
  /** Bytes from `origin`. */
  offset: number;
  /** Raw bytes instead of StreamFrames. */
  plain: boolean;
  /** Keep streaming new bytes, across rotations, until the task is dead. */
  follow: boolean;
  /** True once the task is dead and its logs flushed; a throw counts as dead (the alloc is gone). */
  isTaskDead: () => boolean | Promise<boolean>;
  signal?: AbortSignal;
}

/** The stream has no log files (Nomad answers 404). */
export class LogsNotFoundError extends Error {
  override name = "LogsNotFoundError";
}

/**
 * One stream's rotated files. Only regular files are read: the task can
 * write in its log dir, and a symlink planted there is never followed.
 */
function logSeries(logDir: string, task: string, type: LogType): FileSeries {
  const indexes = () => logFileIndexes(logDir, task, type);
  return {
    async open(index) {
      try {
        const handle = await open(join(logDir, logFileName(task, type, index)), constants.O_RDONLY | constants.O_NOFOLLOW);
        // Closed here on every other path: a FileHandle left to the garbage collector throws in Bun.
        const isFile = await handle.stat().then((stat) => stat.isFile(), () => false);
        if (isFile) return handle;
        await handle.close();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOENT" && code !== "ELOOP") throw err;
      }
      return null;
    },
    laterIndex: (index) => indexes().find((candidate) => candidate > index) ?? null,
    frameName: (index) => `${ALLOC_LOG_DIR}/${logFileName(task, type, index)}`,
    lastIndex: () => indexes().at(-1) ?? null,
  };
}

/** A readable stream of the request's logs; throws LogsNotFoundError when the task has no log files. */
export function streamLogs(request: LogsRequest): ReadableStream<Uint8Array> {
  const start = findLogPosition(request.logDir, request.task, request.type, request.origin, request.offset);
  if (!start) throw new LogsNotFoundError(`log entry for task "${request.task}" and log type "${request.type}" not found`);
  return streamSeries(logSeries(request.logDir, request.task, request.type), start, {
    plain: request.plain,
    follow: request.follow,
    chunkBytes: FRAME_BYTES,
    limit: 0,
    isDone: request.isTaskDead,
    ...(request.signal ? { signal: request.signal } : {}),
  });
}
