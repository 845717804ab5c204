/**
 * `exec`: runs a command in the task's context (Nomad's ExecTask, for health
 * checks and `alloc exec`) and returns its output and exit code. The command
 * gets its own process group, so a timeout kills it and everything it started.
 */
import type { ChildProcess } from "../runtime/spawn.ts";
import type { ExecResult } from "./protocol.ts";
import { killGroup } from "./tree.ts";
import { BYTES_PER_MIB } from "../lib/units.ts";

/** Most bytes kept of each stream; the rest is read and dropped so the command never blocks on a full pipe. */
export const EXEC_OUTPUT_LIMIT_BYTES = 4 * BYTES_PER_MIB;

/** Exit code reported when the timeout killed the command (128 + SIGKILL, as a shell reports it). */
const TIMED_OUT_EXIT_CODE = 137;

async function collect(stream: ReadableStream<Uint8Array> | null, stop: AbortSignal): Promise<string> {
  if (!stream) return "";
  const chunks: Uint8Array[] = [];
  let kept = 0;
  const reader = stream.getReader();
  stop.addEventListener("abort", () => void reader.cancel().catch(() => undefined), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (kept >= EXEC_OUTPUT_LIMIT_BYTES) continue;
    const part = value.subarray(0, EXEC_OUTPUT_LIMIT_BYTES - kept);
    chunks.push(part);
    kept += part.length;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Waits for `child` and for its output to end, up to `timeoutMs` (0 = no
 * limit); then kills its process group and stops reading, so a process that
 * left the group with the pipes (setsid) cannot hold the answer back.
 */
export async function finishExec(child: ChildProcess, timeoutMs: number): Promise<ExecResult> {
  let timedOut = false;
  const stopReading = new AbortController();
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          killGroup(child.pid);
          stopReading.abort();
        }, timeoutMs)
      : null;
  try {
    const [stdout, stderr, status] = await Promise.all([collect(child.stdout, stopReading.signal), collect(child.stderr, stopReading.signal), child.exited]);
    return { stdout, stderr: timedOut ? `${stderr}exec: timed out after ${timeoutMs} ms\n` : stderr, exitCode: timedOut ? TIMED_OUT_EXIT_CODE : status.exitCode };
  } finally {
    if (timer) clearTimeout(timer);
  }
}
