/**
 * Reading a series of files as one stream, in Nomad's semantics: a task's
 * rotated log files (logs.ts), or a single file of an alloc dir
 * (alloc-fs.ts) as a series of one.
 *
 *   start at (index, offset) ─► read at most chunkBytes at a time ─► StreamFrames, or plain bytes
 *   at the end of a file:
 *     a later index exists  ─► read what the file got before it rotated, then the next
 *                              (a file deleted meanwhile is read to its end through the open fd)
 *     not following         ─► stop at the end of the file that was last when the request came
 *     following, source done ─► read to the end once more, then stop (a task's logs are
 *                              flushed before it is reported dead)
 *     following, file deleted ─► a "file deleted" frame, then stop
 *     following, file shrank  ─► a "file truncated" frame, then from offset 0
 *     following             ─► wait FOLLOW_POLL_MS and look again; a heartbeat frame
 *                              after HEARTBEAT_MS of silence (not in plain mode)
 *   a byte limit ends the stream once that many bytes were sent.
 */
import type { FileHandle } from "node:fs/promises";
import { encodeFrame, FILE_DELETED, FILE_TRUNCATED, HEARTBEAT_FRAME } from "./stream-frame.ts";

/** Nomad's streamFrameSize: the most data one frame carries. */
export const FRAME_BYTES = 64 * 1024;
/** How often a follower looks for new bytes, a new file, or the source's end (Nomad batches at 200 ms). */
export const FOLLOW_POLL_MS = 100;
/** Nomad's streamHeartbeatRate: a client sees an empty frame at least this often, so it can tell a quiet file from a dead connection. */
export const HEARTBEAT_MS = 1_000;

/** The files a stream reads, by index (one index for a single file). */
export interface FileSeries {
  /** The file at `index`, open for reading; null when it is not there or is not a regular file. */
  open(index: number): Promise<FileHandle | null>;
  /** The lowest index above `index` that exists now, or null. */
  laterIndex(index: number): number | null;
  /** The name frames give the file at `index` (their File field). */
  frameName(index: number): string;
  /** The highest index that exists now. */
  lastIndex(): number | null;
}

export interface CursorOptions {
  /** Raw bytes instead of StreamFrames. */
  plain: boolean;
  /** Keep streaming new bytes, across rotations, until `isDone`. */
  follow: boolean;
  /** Bytes per read (and so per frame: at most FRAME_BYTES when framed). */
  chunkBytes: number;
  /** Stop after sending this many bytes of data (0: no limit). */
  limit: number;
  /** True once nothing more will be written; a throw counts as done. */
  isDone: () => boolean | Promise<boolean>;
  signal?: AbortSignal;
}

/**
 * A readable stream of `series` from (`index`, `offset`). A `handle` given
 * is the file at `index`, already open: the stream owns it from here and
 * closes it when it ends or is cancelled, read or not.
 */
export function streamSeries(series: FileSeries, start: { index: number; offset: number; handle?: FileHandle }, options: CursorOptions): ReadableStream<Uint8Array> {
  const cursor = new FileCursor(series, options, start.index, start.offset, start.handle ?? null);
  options.signal?.addEventListener("abort", () => void cursor.cancel(), { once: true });
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

class FileCursor {
  /** Non-follow requests end with the file that was last when they came. */
  private readonly lastIndex: number;
  private lastSent = performance.now();
  private sawDone = false;
  private cancelled = false;
  private wake: (() => void) | null = null;
  /** Bytes of data still allowed (Infinity without a limit). */
  private remaining: number;

  constructor(
    private readonly series: FileSeries,
    private readonly options: CursorOptions,
    private index: number,
    private offset: number,
    private handle: FileHandle | null,
  ) {
    this.lastIndex = series.lastIndex() ?? index;
    this.remaining = options.limit > 0 ? options.limit : Number.POSITIVE_INFINITY;
  }

  /** The next chunk to send, or null at the end. */
  async next(): Promise<Uint8Array | null> {
    while (!this.cancelled) {
      if (this.remaining <= 0) return null;
      if (!this.handle && !(await this.openCurrent())) {
        if (!this.options.follow || (await this.done())) return null;
        await this.sleep();
        continue;
      }
      const data = await this.read();
      if (data) return this.frame(data);

      const later = this.series.laterIndex(this.index);
      if (later !== null && (this.options.follow || this.index < this.lastIndex)) {
        // Every write to this file came before the later one was created: read once more, then move on.
        const rest = await this.read();
        if (rest) return this.frame(rest);
        const deleted = (await this.handle!.stat()).nlink === 0 ? this.eventFrame(FILE_DELETED) : null;
        await this.switchTo(later);
        if (deleted) return deleted;
        continue;
      }
      if (!this.options.follow) return null;

      const stat = await this.handle!.stat();
      if (stat.nlink === 0) {
        // Gone with nothing after it: say so and end (Nomad's delete event).
        this.remaining = 0;
        return this.eventFrame(FILE_DELETED);
      }
      if (stat.size < this.offset) {
        this.offset = 0;
        const truncated = this.eventFrame(FILE_TRUNCATED);
        if (truncated) return truncated;
        continue;
      }
      if (this.sawDone) return null;
      if (await this.done()) {
        this.sawDone = true;
        continue;
      }
      await this.sleep();
      if (!this.options.plain && performance.now() - this.lastSent >= HEARTBEAT_MS) {
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

  /** Opens the current index; when it is gone before we got to it, moves on to the next. */
  private async openCurrent(): Promise<boolean> {
    for (;;) {
      this.handle = await this.series.open(this.index);
      if (this.handle) return true;
      const later = this.series.laterIndex(this.index);
      if (later === null) return false;
      this.index = later;
      this.offset = 0;
    }
  }

  private async read(): Promise<Uint8Array | null> {
    const size = Math.min(this.options.chunkBytes, this.remaining);
    const buffer = new Uint8Array(size);
    const { bytesRead } = await this.handle!.read(buffer, 0, size, this.offset);
    if (bytesRead === 0) return null;
    this.offset += bytesRead;
    this.remaining -= bytesRead;
    return buffer.subarray(0, bytesRead);
  }

  private async switchTo(index: number): Promise<void> {
    await this.handle?.close();
    this.handle = null;
    this.index = index;
    this.offset = 0;
  }

  private frame(data: Uint8Array): Uint8Array {
    this.lastSent = performance.now();
    if (this.options.plain) return data;
    return encodeFrame({ offset: this.offset, data, file: this.series.frameName(this.index) });
  }

  /** A FileEvent frame; null in plain mode, which carries no events. */
  private eventFrame(event: string): Uint8Array | null {
    if (this.options.plain) return null;
    this.lastSent = performance.now();
    return encodeFrame({ offset: this.offset, file: this.series.frameName(this.index), event });
  }

  private async done(): Promise<boolean> {
    try {
      return await this.options.isDone();
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
