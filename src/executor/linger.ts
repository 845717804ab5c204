/**
 * When an executor may leave on its own, with no agent to say `destroy`.
 *
 *   never launched, no agent connected for IDLE_EXIT_MS       -> exit (nothing to supervise;
 *                                                                 its agent died mid-start)
 *   task exited, result durable, no agent for ORPHAN_LINGER_MS,
 *   and every FIFO read empty by the log pump                 -> exit (a returning agent reads
 *                                                                 the exit file)
 *   anything else (task running, agent connected, log bytes
 *   still in a pipe)                                          -> stay
 *
 * Unread log bytes keep it: closing the last writer-side descriptor of a FIFO
 * whose reader is gone would drop them.
 */

/** A launch follows the executor's start within milliseconds; a minute without one means its agent died. */
export const IDLE_EXIT_MS = 60_000;
/** An agent restart or upgrade takes seconds; five minutes without any agent means none is coming soon. */
export const ORPHAN_LINGER_MS = 5 * 60_000;
/** How often an unattended executor looks whether it may leave. */
export const LINGER_CHECK_MS = 10_000;

export interface LingerFacts {
  state: "idle" | "running" | "exited";
  /** Open agent connections right now. */
  connections: number;
  /** Milliseconds since the last connection closed (or since the start, if none ever opened). */
  unattendedMs: number;
  /** Bytes still unread in the task's FIFOs. */
  unreadLogBytes: number;
}

export function mayExit(facts: LingerFacts): boolean {
  if (facts.connections > 0) return false;
  if (facts.state === "idle") return facts.unattendedMs >= IDLE_EXIT_MS;
  if (facts.state === "exited") return facts.unattendedMs >= ORPHAN_LINGER_MS && facts.unreadLogBytes === 0;
  return false;
}
