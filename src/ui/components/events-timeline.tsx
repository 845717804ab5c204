/** A task's events, newest first, as a timeline: when, what, and Nomad's message. */
import type { TaskEvent } from "../api/shapes.ts";
import { dateTime, timeOfDay } from "../format.ts";

const BAD = new Set(["Driver Failure", "Failed Validation", "Setup Failure", "Killing", "Killed", "Terminated", "Not Restarting", "Sibling Task Failed", "Disk Resources Exceeded", "Task hook failed"]);

export function EventsTimeline({ events }: { events: TaskEvent[] }) {
  if (events.length === 0) return <p class="muted">No events yet.</p>;
  const newest = [...events].sort((a, b) => (b.Time ?? 0) - (a.Time ?? 0));
  return (
    <ol class="timeline">
      {newest.map((event, i) => (
        <li key={`${event.Time}-${i}`} class={BAD.has(event.Type ?? "") ? "event-bad" : undefined}>
          <time dateTime={new Date((event.Time ?? 0) / 1e6).toISOString()} title={dateTime(event.Time)}>
            {timeOfDay(event.Time)}
          </time>
          <b>{event.Type}</b>
          <span>{event.DisplayMessage || event.Message}</span>
        </li>
      ))}
    </ol>
  );
}
