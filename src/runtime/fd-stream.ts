/**
 * Moving bytes through descriptors this process owns (pipe ends, a terminal
 * master) without blocking the event loop: the agent's side of an
 * interactive exec session. Neither reader nor writer closes the descriptor;
 * its owner does, once both are stopped, so no pending operation can touch a
 * descriptor number the kernel has already handed to someone else.
 */
import { F_GETFL, F_SETFL, fcntl, O_NONBLOCK, sysWriteSome } from "./libc.ts";

/**
 * Reads `fd` until its end, awaiting `onChunk` for each chunk (so a slow
 * consumer slows the reading, and the writer blocks on a full pipe rather
 * than this process buffering without bound). A terminal master whose every
 * slave is closed reads as an end (EIO), not as an error. `stop` ends the
 * reading early.
 */
export type ReadDescriptor = (fd: number, onChunk: (chunk: Uint8Array) => void | Promise<void>, stop: AbortSignal) => Promise<void>;

export { readDescriptor } from "@drover/runtime/fd-stream.ts";

/**
 * While the reader of a writer's descriptor is not taking bytes (its pipe or
 * terminal buffer is full), the queued rest is tried again this often. Typing
 * never gets here; a command that ignores a large piped stdin does.
 */
const WRITE_RETRY_MS = 10;

export interface DescriptorWriter {
  /** Queues `bytes`; they go out as the reader takes them. Bytes for a reader that is gone are dropped. */
  write(bytes: Uint8Array): void;
  /** Drops whatever is still queued; the owner may close the descriptor after this. */
  stop(): void;
}

/** A writer to `fd`, which it makes non-blocking (for a terminal master, its reads too). */
export function descriptorWriter(fd: number): DescriptorWriter {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const queue: Uint8Array[] = [];
  let retry: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  const pump = () => {
    retry = null;
    while (queue.length > 0 && !stopped) {
      const head = queue[0]!;
      let written: number;
      try {
        // libc rather than node:fs: Deno's node:fs refuses descriptors it did not open (these come from pidfd_getfd).
        written = sysWriteSome(fd, head);
      } catch (err) {
        if ((err as { code?: string }).code === "EAGAIN") {
          retry = setTimeout(pump, WRITE_RETRY_MS);
          return;
        }
        // EPIPE, EIO: the command no longer reads its input.
        queue.length = 0;
        return;
      }
      if (written < head.length) queue[0] = head.subarray(written);
      else queue.shift();
    }
  };

  return {
    write(bytes) {
      if (stopped || bytes.length === 0) return;
      queue.push(bytes);
      if (retry === null) pump();
    },
    stop() {
      stopped = true;
      queue.length = 0;
      if (retry !== null) clearTimeout(retry);
      retry = null;
    },
  };
}
