/**
 * runtime/fd-stream.ts on Deno: poll(2) on a blocking thread until `fd` is
 * readable, then read(2) on the JS thread (Deno's node:fs refuses descriptors
 * it did not open itself, and these come from pidfd_getfd).
 */
import type { ReadDescriptor } from "../fd-stream.ts";
import { POLLIN, SysError, sysRead } from "../libc.ts";
import { blockingCalls } from "./blocking-calls.ts";

/** Longest a wait for data lasts before `stop` is looked at again: how late a stopped reader notices. */
const STOP_CHECK_MS = 100;
/** Bytes per read: a terminal's or a pipe's buffer at most. */
const CHUNK_BYTES = 64 * 1024;

export const readDescriptor: ReadDescriptor = async (fd, onChunk, stop) => {
  const pollFd = new Int32Array([fd, POLLIN]);
  while (!stop.aborted) {
    if ((await blockingCalls().poll(pollFd, 1, STOP_CHECK_MS)) <= 0 || stop.aborted) continue;
    const buffer = new Uint8Array(CHUNK_BYTES);
    let n: number;
    try {
      n = sysRead(fd, buffer);
    } catch (err) {
      const code = (err as SysError).code;
      if (code === "EAGAIN") continue;
      // A terminal master whose slaves are all closed.
      if (code === "EIO") return;
      throw err;
    }
    if (n === 0) return;
    await onChunk(buffer.subarray(0, n));
  }
};
