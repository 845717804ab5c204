/**
 * The one timer that ends drains at their deadline: armed for the earliest
 * ForceDeadline still ahead among the draining nodes, re-armed after every
 * drain change and after it fires. A deadline that passed while the agent
 * was down is the server's to handle when it opens.
 */
import type { Node } from "../../structs/node.ts";
import { forceDeadlineNanos } from "./drainer.ts";

/** setTimeout's largest delay (~24.8 days); a later deadline re-arms when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Fire this long after the deadline, so the write it triggers surely sees the deadline passed. */
const DEADLINE_SLACK_MS = 5;
/** After a failed write (a full disk): try the deadline's work again this much later. */
const RETRY_MS = 1000;

export class DrainDeadlineTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly nodes: () => Iterable<Node>,
    /** Advances the drains; the timer re-arms after it. */
    private readonly fire: () => void,
  ) {}

  arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = Date.now();
    let earliest: number | undefined;
    for (const node of this.nodes()) {
      const deadline = forceDeadlineNanos(node);
      if (deadline === undefined || deadline / 1e6 <= now) continue;
      if (earliest === undefined || deadline < earliest) earliest = deadline;
    }
    if (earliest === undefined) return;
    const delay = Math.min(MAX_TIMER_MS, Math.ceil(earliest / 1e6 - now) + DEADLINE_SLACK_MS);
    this.start(delay);
  }

  private start(delay: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      try {
        this.fire();
      } catch {
        // The deadline has passed, so arm() would skip it: retry it on its own.
        this.start(RETRY_MS);
        return;
      }
      this.arm();
    }, delay);
    this.timer.unref?.();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
