/**
 * Rescheduling a failed allocation (Nomad's Allocation.NextRescheduleTime
 * and NextDelay): whether the group's `reschedule` policy allows another
 * attempt, and after what delay.
 *
 *   alloc failed, still told to run, not yet replaced
 *     │  attempts within `interval` used up (and not `unlimited`) ──> stays failed
 *     ▼
 *   delay: constant ─ `delay` every time
 *          exponential ─ twice the last delay
 *          fibonacci ─ the last two delays added
 *          capped at `max_delay`; once capped, a failure longer than that after
 *          the last reschedule starts again from `delay`
 *     ▼
 *   due (fail time + delay) ──> now: place the replacement; later: a follow-up evaluation waits for it
 */
import { allocTaskGroup, type Allocation, type RescheduleEvent } from "../../structs/alloc.ts";
import { NS_PER_MS } from "../../lib/units.ts";

/**
 * Nomad's rescheduleWindowSize: a reschedule due this soon is done now
 * rather than through a follow-up evaluation.
 */
export const RESCHEDULE_WINDOW_NS = 1_000 * NS_PER_MS;

/** Nomad's allocRescheduled description for the failed alloc a replacement takes over from. */
export const RESCHEDULED = "alloc was rescheduled because it failed";

/** When the alloc failed: the latest task finish, else its last change (Nomad's LastEventTime), in ns. */
export function failTime(alloc: Allocation): number {
  let latest = 0;
  for (const state of Object.values(alloc.TaskStates ?? {})) {
    const finished = state.FinishedAt ? Date.parse(state.FinishedAt) * NS_PER_MS : 0;
    if (finished > latest) latest = finished;
  }
  return latest || alloc.ModifyTime;
}

function events(alloc: Allocation): readonly RescheduleEvent[] {
  return alloc.RescheduleTracker?.Events ?? [];
}

/** The delay before the next attempt. */
export function nextDelay(alloc: Allocation): number {
  const policy = allocTaskGroup(alloc)?.ReschedulePolicy;
  if (!policy) return 0;
  const past = events(alloc);
  const last = past.at(-1);
  if (!last) return policy.Delay;
  let delay: number;
  switch (policy.DelayFunction) {
    case "exponential":
      delay = last.Delay * 2;
      break;
    case "fibonacci": {
      const before = past.at(-2);
      delay = !before ? policy.Delay : before.Delay === policy.MaxDelay && last.Delay === policy.Delay ? last.Delay : last.Delay + before.Delay;
      break;
    }
    default:
      return policy.Delay;
  }
  if (policy.MaxDelay > 0 && delay > policy.MaxDelay) {
    delay = policy.MaxDelay;
    if (failTime(alloc) - last.RescheduleTime > delay) delay = policy.Delay;
  }
  return delay;
}

/** When the failed alloc may be replaced (ns), or undefined when its policy allows no more attempts. */
export function nextRescheduleTime(alloc: Allocation): number | undefined {
  const policy = allocTaskGroup(alloc)?.ReschedulePolicy;
  if (!policy || alloc.DesiredStatus !== "run" || alloc.ClientStatus !== "failed") return undefined;
  if (!policy.Unlimited && policy.Attempts === 0) return undefined;
  const failed = failTime(alloc);
  const delay = nextDelay(alloc);
  if (!policy.Unlimited) {
    const attempted = events(alloc).filter((event) => failed - event.RescheduleTime < policy.Interval).length;
    if (attempted >= policy.Attempts || (attempted > 0 && delay >= policy.Interval)) return undefined;
  }
  return failed + delay;
}

/** The tracker the replacement of `alloc` carries: its own events and this attempt. */
export function trackerFor(alloc: Allocation, now: number): { Events: RescheduleEvent[] } {
  return { Events: [...events(alloc), { RescheduleTime: now, PrevAllocID: alloc.ID, PrevNodeID: alloc.NodeID, Delay: nextDelay(alloc) }] };
}
