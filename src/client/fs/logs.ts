/**
 * The log streaming core of GET /v1/client/fs/logs/:alloc_id: a task's
 * stdout or stderr read across its rotated files, in Nomad's semantics.
 *
 *   start: offset from origin across the rotated files (log-position.ts)
 *   read the file from there, at most FRAME_BYTES per chunk ─► Nomad StreamFrames, or plain bytes
 *   at the end of a file:
 *     a later index exists  ─► read what the file got before it rotated, then the next
 *                              (a file deleted meanwhile is read to its end through the open fd)
 *     not following         ─► stop at the end of the file that was live when the request came
 *     following, task dead  ─► read to the end once more, then stop (the logmon flushed
 *                              every byte before the task was reported dead)
 *     following             ─► wait FOLLOW_POLL_MS and look again; a heartbeat frame
 *                              after HEARTBEAT_MS of silence (not in plain mode)
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { ALLOC_LOG_DIR, logFileIndexes, logFileName, type LogType } from "../../logs/layout.ts";
import { findLogPosition, type Origin } from "./log-position.ts";
import { encodeFrame, FILE_DELETED, FILE_TRUNCATED, HEARTBEAT_FRAME } from "./stream-frame.ts";

/** Nomad's streamFrameSize: the most data one frame (or plain chunk) carries. */
export const FRAME_BYTES = 64 * 1024;
/** How often a follower looks for new bytes, a new file, or the task's death (Nomad batches at 200 ms). */
export const FOLLOW_POLL_MS = 100;
/** Nomad's streamHeartbeatRate: a client sees an empty frame at least this often, so it can tell a quiet task from a dead connection. */
export const HEARTBEAT_MS = 1_000;

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

/** A readable stream of the request's logs; throws LogsNotFoundError when the task has no log files. */
export function streamLogs(request: LogsRequest): ReadableStream<Uint8Array> {
  const start = findLogPosition(request.logDir, request.task, request.type, request.origin, request.offset);
  if (!start) throw new LogsNotFoundError(`log entry for task "${request.task}" and log type "${request.type}" not found`);
  const cursor = new LogCursor(request, start.index, start.offset);
  request.signal?.addEventListener("abort", () => void cursor.cancel(), { once: true });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Uint8Array | null;
        try {
          chunk = await cursor.next();
        } catch (err) {
          // A read cut short by a cancel (its file closed under it) is no error.
          if (cursor.isCancelled) return;
          await cursor.cancel();
          throw err;
        }
        if (cursor.isCancelled) return;
        if (chunk) controller.enqueue(chunk);
        else {
          controller.close();
          await cursor.cancel();
        }
      },
      cancel: () => cursor.cancel(),
    },
    { highWaterMark: 0 },
  );
}

class LogCursor {
  private handle: FileHandle | null = null;
  /** Non-follow requests end with the file that was live when they came. */
  private readonly lastIndex: number;
  private lastSent = performance.now();
  private sawDeath = false;
  private cancelled = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly request: LogsRequest,
    private index: number,
    private offset: number,
  ) {
    this.lastIndex = logFileIndexes(request.logDir, request.task, request.type).at(-1) ?? index;
  }

  /** The next chunk to send, or null at the end. */
  async next(): Promise<Uint8Array | null> {
    while (!this.cancelled) {
      if (!this.handle && !(await this.openCurrent())) {
        if (!this.request.follow || (await this.taskDead())) return null;
        await this.sleep();
        continue;
      }
      const data = await this.read();
      if (data) return this.frame(data);

      const later = this.laterIndex();
      if (later !== null && (this.request.follow || this.index < this.lastIndex)) {
        // Every write to this file came before the later one was created: read once more, then move on.
        const rest = await this.read();
        if (rest) return this.frame(rest);
        const deleted = (await this.handle!.stat()).nlink === 0 ? this.eventFrame(FILE_DELETED) : null;
        await this.switchTo(later);
        if (deleted) return deleted;
        continue;
      }
      if (!this.request.follow) return null;

      if ((await this.handle!.stat()).size < this.offset) {
        this.offset = 0;
        const truncated = this.eventFrame(FILE_TRUNCATED);
        if (truncated) return truncated;
        continue;
      }
      if (this.sawDeath) return null;
      if (await this.taskDead()) {
        this.sawDeath = true;
        continue;
      }
      await this.sleep();
      if (!this.request.plain && performance.now() - this.lastSent >= HEARTBEAT_MS) {
        this.lastSent = performance.now();
        return HEARTBEAT_FRAME;
      }
    }
    return null;
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  async cancel(): Promise<void> {
    this.cancelled = true;
    this.wake?.();
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
  }

  private get fileName(): string {
    return logFileName(this.request.task, this.request.type, this.index);
  }

  /**
   * Opens the current index; when it was rotated out before we got to it, or
   * is not a regular file (a symlink the task planted is never followed),
   * moves on to the next.
   */
  private async openCurrent(): Promise<boolean> {
    for (;;) {
      try {
        const handle = await open(join(this.request.logDir, this.fileName), constants.O_RDONLY | constants.O_NOFOLLOW);
        if ((await handle.stat()).isFile()) {
          this.handle = handle;
          return true;
        }
        await handle.close();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOENT" && code !== "ELOOP") throw err;
      }
      const later = this.laterIndex();
      if (later === null) return false;
      this.index = later;
      this.offset = 0;
    }
  }

  private async read(): Promise<Uint8Array | null> {
    const buffer = new Uint8Array(FRAME_BYTES);
    const { bytesRead } = await this.handle!.read(buffer, 0, FRAME_BYTES, this.offset);
    if (bytesRead === 0) return null;
    this.offset += bytesRead;
    return buffer.subarray(0, bytesRead);
  }

  private laterIndex(): number | null {
    return logFileIndexes(this.request.logDir, this.request.task, this.request.type).find((index) => index > this.index) ?? null;
  }

  private async switchTo(index: number): Promise<void> {
    await this.handle?.close();
    this.handle = null;
    this.index = index;
    this.offset = 0;
  }

  private frame(data: Uint8Array): Uint8Array {
    this.lastSent = performance.now();
    if (this.request.plain) return data;
    return encodeFrame({ offset: this.offset, data, file: `${ALLOC_LOG_DIR}/${this.fileName}` });
  }

  /** A FileEvent frame; null in plain mode, which carries no events. */
  private eventFrame(event: string): Uint8Array | null {
    if (this.request.plain) return null;
    this.lastSent = performance.now();
    return encodeFrame({ offset: this.offset, file: `${ALLOC_LOG_DIR}/${this.fileName}`, event });
  }

  private async taskDead(): Promise<boolean> {
    try {
      return await this.request.isTaskDead();
    } catch {
      return true;
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, FOLLOW_POLL_MS);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }
}
