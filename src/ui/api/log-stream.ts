/**
 * A task's log, followed through GET /v1/client/fs/logs/:alloc in Nomad's
 * StreamFrames: JSON objects back to back, each {Offset, Data (base64),
 * File, FileEvent}, and {} as a heartbeat while the task is quiet.
 *
 *   the log's last TAIL_BYTES ──> frames ──> text to the page
 *        │ the stream ends or fails while following ──> after RETRY_MS, the page starts over with the tail
 *        │ the tab is hidden ──> the stream is closed; the tail again once it is visible
 *
 * Starting over rather than resuming at an offset: a frame's Offset is
 * within its own file, while the query's counts across the rotated files,
 * and a task that restarted may have rotated meanwhile.
 */
import { fromBase64 } from "./base64.ts";
import { send } from "./client.ts";
import { isVisible, pause, whenVisible } from "./visibility.ts";

/** How much of the log's end a page opens with: a screenful or so, not a whole file. */
const TAIL_BYTES = 50_000;
/** Wait before reopening a stream that ended while following (the task restarting, the agent too). */
export const RETRY_MS = 1_000;

export interface LogFrame {
  Offset?: number;
  Data?: string;
  File?: string;
  FileEvent?: string;
}

/** Splits a byte stream of back-to-back JSON objects into objects. */
export class FrameSplitter {
  private buffer = "";
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scanned = 0;

  push(chunk: string): LogFrame[] {
    this.buffer += chunk;
    const frames: LogFrame[] = [];
    let start = 0;
    for (let i = this.scanned; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (ch === "\\") this.escaped = true;
        else if (ch === '"') this.inString = false;
      } else if (ch === '"') this.inString = true;
      else if (ch === "{") {
        if (this.depth === 0) start = i;
        this.depth++;
      } else if (ch === "}") {
        this.depth--;
        if (this.depth === 0) {
          frames.push(JSON.parse(this.buffer.slice(start, i + 1)) as LogFrame);
          start = i + 1;
        }
      } else if (this.depth === 0) start = i + 1;
    }
    this.buffer = this.buffer.slice(this.depth === 0 ? this.buffer.length : start);
    this.scanned = this.buffer.length;
    return frames;
  }
}

export interface LogStreamOptions {
  allocId: string;
  namespace: string;
  task: string;
  type: "stdout" | "stderr";
  follow: boolean;
  signal: AbortSignal;
  /** The page is to drop what it shows: the tail follows. */
  reset(): void;
  text(chunk: string): void;
  error(message: string | undefined): void;
}

/** Streams the log's tail, then (following) what the task writes, until `signal` aborts. */
export async function streamLog(options: LogStreamOptions): Promise<void> {
  const { signal } = options;
  while (!signal.aborted) {
    await whenVisible(signal);
    if (signal.aborted) return;
    const query = new URLSearchParams({ namespace: options.namespace, task: options.task, type: options.type, follow: String(options.follow), origin: "end", offset: String(TAIL_BYTES) });
    // Hidden: close this stream, so the tab holds no connection; the loop reopens it once visible.
    const local = new AbortController();
    const onAbort = () => local.abort();
    signal.addEventListener("abort", onAbort);
    const onHidden = () => !isVisible() && local.abort();
    document.addEventListener("visibilitychange", onHidden);
    try {
      const response = await send(`/v1/client/fs/logs/${encodeURIComponent(options.allocId)}?${query}`, { signal: local.signal });
      options.error(undefined);
      options.reset();
      const decoder = new TextDecoder();
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      const splitter = new FrameSplitter();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const frame of splitter.push(value)) {
          if (frame.Data) options.text(decoder.decode(fromBase64(frame.Data), { stream: true }));
        }
      }
      if (!options.follow) return;
    } catch (err) {
      if (signal.aborted) return;
      if (!local.signal.aborted) options.error(err instanceof Error ? err.message : String(err));
    } finally {
      signal.removeEventListener("abort", onAbort);
      document.removeEventListener("visibilitychange", onHidden);
    }
    await pause(RETRY_MS, signal);
  }
}

